"""What a turn does besides telling: asks, requests, corrects itself, hands the conversation over.

`is_request` tells a question or request to the assistant ("What's a good podcast?", "Can you
recommend…", "帮我想一个…") from a statement: a request says nothing the memory could hold as true or
false about the user. A question that tells something first ("I just adopted a puppy, what should I
feed her?") is a statement too. `asks_only` also lets interjections and thanks pass ("Cool! What
position are you playing?"); `states_nothing` finds a turn that only greets, thanks or acknowledges
("hi", "谢谢啦"); `corrects_itself` a speaker revising what they have just said; `ends_asking` a turn
whose next one answers it; `told_part` a text without its questions. Chat often asks without a question
mark ("海边的民宿贵不贵", "how do I keep basil alive indoors"): such a sentence asks too.

Shared by perception (the signals, `pcm.cues`), routing (requests route low) and evolution (a stored
request is never a conflict), so it sits below all three.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pcm.world.text import has_cjk

_SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]*")
_ATTACHMENT = re.compile(r"\[[^\[\]]*\]\s*$")
#: what breaks a sentence into clauses: commas, semicolons, dashes, an ellipsis, an emoji ("Bought a house 🏠 what
#: should I fix first?")
_BREAK = "[,;，；—…\u2600-\u27bf\U0001f000-\U0001faff]"
_LAST_CLAUSE = re.compile(rf"{_BREAK}+(?![\s\S]*{_BREAK})")
_CLAUSES = re.compile(rf"{_BREAK}+")
_REQUEST_OPENERS = re.compile(
    r"^(?:can|could|would|will) you\b|^(?:please )?(?:help|remind|tell) me\b|^(?:any|some) "
    r"(?:tips|ideas|suggestions|recommendations)\b|^(?:recommend|suggest)\b|^what'?s a good\b|"
    r"^(?:please )?(?:translate|explain|draft|write|summari[sz]e|list|give me|show me|describe|compare|define|"
    r"calculate|convert|rewrite|proofread|brainstorm|generate|outline)\b"
)
_CHINESE_REQUEST_OPENERS = (
    "帮我",
    "请问",
    "推荐",
    "给我推荐",
    "能不能",
    "可以帮",
    "写一",
    "写个",
    "讲个",
    "讲讲",
    "解释一下",
    "翻译",
    "列一",
    "列个",
    "总结一下",
    "给我讲",
    "给我写",
    "给我列",
    "给我出",
    "给我想",
)
#: a speaker correcting what they have just said ("Sorry, I meant Portland", "Actually she's eight", "我说错了")
_SELF_CORRECTION = re.compile(
    r"\b(?:actually|i meant|i mean,|correction|my (?:bad|mistake)|i misspoke|scratch that|oops|"
    r"sorry,? (?:it'?s|that'?s|not)\b)"
)
_CHINESE_SELF_CORRECTION = ("其实", "说错", "更正", "纠正", "不对", "我是说", "口误")


@lru_cache(maxsize=4096)
def is_request(text: str) -> bool:
    """True when every sentence of `text` asks something (ends with a question mark or opens
    like "can you", "help me", "recommend", "帮我", "推荐") rather than telling something, a
    question that tells something first included ("I just adopted a puppy, what should I feed her?").
    Cached: routing and maintenance both ask it of the same turn."""
    sentences = _sentences(text)
    return bool(sentences) and all(_asks_only(sentence) for sentence in sentences)


#: words that make up a sentence which neither tells nor asks ("Cool!", "Thanks, Mel!", "Oh wow!")
_INTERJECTIONS = frozenset(
    "oh ooh wow whoa aw aww yay cool nice great awesome amazing sweet haha hah lol hey hi hello thanks thank "
    "you congrats congratulations ok okay sure yeah yes yep hmm ah omg my so much good morning afternoon evening "
    "night bye goodbye cheers thx ty alright gotcha hahaha lmao yo hiya noted perfect".split()
)
_CHINESE_INTERJECTIONS = frozenset(
    "哇 哇塞 哈哈 哈哈哈 嘿嘿 呵呵 谢谢 谢谢你 谢谢您 多谢 感谢 辛苦了 好 好的 好吧 好嘞 行 行吧 可以 "
    "嗯 嗯嗯 哦 噢 哦哦 收到 明白 明白了 知道了 懂了 了解 太好了 真棒 厉害 恭喜 你好 您好 哈喽 嗨 "
    "在吗 在不在 拜拜 再见 晚安 早 早安".split()
)
#: a greeting of the time of day or of an occasion ("早上好", "周末好", "新年好")
_CHINESE_GREETING = re.compile(r"^(?:早上|上午|中午|下午|晚上|周末|新年|节日|大家)好$")
#: particles that close a Chinese interjection without changing it ("谢谢啦", "好的呀")
_CHINESE_PARTICLES = "啦呀哈哦喔嘛噢~～"


def asks_only(text: str) -> bool:
    """True when `text` asks and tells nothing: every sentence asks (`is_request`), or is an
    interjection, thanks or greeting, perhaps with a name ("Cool! What position are you playing?").
    Such a turn states no fact, so it revises none, however close the fact it asks about."""
    sentences = [sentence for sentence in _sentences(text) if not _is_interjection(sentence)]
    return bool(sentences) and all(_asks_only(sentence) for sentence in sentences)


#: a clause that frames the question after it rather than telling something ("Quick question, …", "I was
#: wondering, …", "我想问一下，…")
_FRAMING = re.compile(r"\b(?:wonder(?:ing)?|curious|question|ask(?:ing)?|know|quick|random|honestly|seriously)\b")
_CHINESE_FRAMING = ("想问", "请问", "请教", "想知道", "问一下", "问下", "说说", "对了")
#: a clause that asks itself ("What should I aim for, three months?", "有没有适合带饭的菜，第二天热了也好吃的？")
_QUESTION_OPENERS = re.compile(
    r"^(?:what|how|where|when|why|which|who|whose|is|are|am|do|does|did|can|could|should|would|will|any|anyone)\b"
)
#: a Chinese question as chat writes it, without its question mark: it closes on 吗 or 呢, on a question word or on
#: an A-not-A choice ("上海首付比例是多少", "海边的民宿贵不贵"), or opens on such a choice ("是不是得去医院看看")
_CHINESE_ASKING_END = re.compile(r"(?:吗|呢|多少|什么|哪[里儿个些]?|怎么样|怎么办|如何|为什么|(.)不\1)[呀啊嘛]?$")
#: an English question as chat writes it, without its question mark: its last clause opens on a question word and
#: the verb it asks with ("how do I write a job ad for a weekend counter", "and what's a quick lunch")
_ENGLISH_ASKING_CLAUSE = re.compile(
    r"^(?:(?:and|but|so|also|ok|okay)\s+)*(?:what|how|where|when|why)(?:'s|'re| is| are| do| does| did| can| "
    r"could| should| would| will)\b"
)
_CHINESE_QUESTION_OPENERS = ("是不是", "有没有", "要不要", "会不会", "可不可以", "该不该")
_CHINESE_QUESTION_WORDS = (
    "什么",
    "怎么",
    "怎样",
    "如何",
    "哪",
    "吗",
    "呢",
    "有没有",
    "是不是",
    "能不能",
    "还是",
    "多少",
    "为什么",
    "几",
)
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|we|we're|we've|my|our|me|us)\b")
#: a clause that tells with its subject dropped, as chat does ("Just sold the Civic, …", "Finally beat Elden Ring
#: after 140 hours, …"): it opens on a verb in the past tense
_DROPPED_SUBJECT = re.compile(
    r"^(?:(?:just|finally|recently|already|today|yesterday|so|ok|okay|officially)\s+)*"
    r"(?!(?:based|compared|assuming|given|related|concerned|wondered|interested|confused|tired|bored|need|used)\b)"
    r"(?:\w{3,}ed|got|bought|sold|lost|made|took|went|began|quit|left|found|won|broke|met|had|became|beat|ran|swam|"
    r"wrote|sent|gave|paid|spent|kept|built|caught|fell|hit|hurt|rode|saw|told|threw|wore|flew|drove|ate|brought|"
    r"came|did|bit|chose|forgot|grew|sat|sang|slept|sprained|tore|woke)\b"
)
#: a clause that asks what would be, not what is ("Say I adopted a cat, …", "如果我搬到大理住，…")
_HYPOTHETICAL = re.compile(r"^(?:if|say|suppose|supposing|imagine|assuming|hypothetically|what if|let'?s say)\b")
_CHINESE_HYPOTHETICAL = ("如果", "假如", "假设", "要是", "万一", "若是", "假若")
#: a clause after a request that tells why ("Suggest a skincare routine, I've got oily skin", "帮我列个搬家清单，
#: 我月底从上海搬到苏州"), not one that only says what is wanted ("…, I want something light")
_TELLS_AFTER = re.compile(
    r"^(?:(?:btw|but|and|since|because|cause|cos|as|so)\s+)?(?:i|i'm|i've|i'll|we|we're|we've|my|our)\b"
)
_WANTS = re.compile(
    r"^(?:(?:btw|but|and|so)\s+)?(?:i|we)(?:'d| would| really| just| also| am|'m| was)* "
    r"(?:want|need|looking for|wonder|wondering|prefer|hope)\b|^(?:i|we)(?:'d| would) like\b"
)
_CHINESE_WANTS = ("我想", "我要", "我需要", "我希望", "我们想")


def _tells_before_asking(sentence: str) -> bool:
    """True when a question's clause before its last break tells something of the speaker ("I just got a 3D
    printer, where do people find files?", "Moved to Leeds last month, where's good for brunch?",
    "下个月要去广交会参展了，第一次去，展位上要准备些什么？"): the turn states a fact as well as asking. A short,
    framing, hypothetical or asking clause tells nothing ("Quick question, …", "Say I adopted a cat, …", "对了，…"):
    in English four words naming the speaker or opening on a verb in the past, in Chinese six characters."""
    if not _ends_asking(sentence) or not _LAST_CLAUSE.search(sentence):
        return False
    before = _LAST_CLAUSE.split(sentence)[0].strip()
    if _is_interjection(before) or _asks(before):
        return False
    if has_cjk(before):
        return (
            len(re.findall(r"[\u4e00-\u9fff]", before)) >= 6
            and not any(word in before for word in (*_CHINESE_FRAMING, *_CHINESE_QUESTION_WORDS))
            and not before.startswith((*_CHINESE_REQUEST_OPENERS, *_CHINESE_HYPOTHETICAL))
        )
    lowered = before.lower().lstrip("\"'“‘(")
    words = re.findall(r"[\w']+", lowered)
    return (
        (
            len(words) >= 4
            and bool(_FIRST_PERSON.search(lowered))
            or len(words) >= 3
            and bool(_DROPPED_SUBJECT.match(lowered))
        )
        and not _FRAMING.search(lowered)
        and not _QUESTION_OPENERS.match(lowered)
        and not _HYPOTHETICAL.match(lowered)
    )


def _tells_after_asking(sentence: str) -> bool:
    """True when a clause after the first of an asking sentence tells something of the speaker ("Help me word a
    resignation letter, I'm leaving to care for my mum", "what's a good beginner guitar — my wife got me lessons",
    "给我推荐点适合孕妇听的音乐，我怀孕五个月了"): the speaker as its subject, not saying only what they want."""
    for clause in _CLAUSES.split(sentence)[1:]:
        clause = clause.strip()
        if has_cjk(clause):
            if (
                clause.startswith("我")
                and len(re.findall(r"[\u4e00-\u9fff]", clause)) >= 5
                and not clause.startswith(_CHINESE_WANTS)
                and not any(word in clause for word in (*_CHINESE_FRAMING, *_CHINESE_QUESTION_WORDS))
            ):
                return True
            continue
        lowered = clause.lower()
        if (
            _TELLS_AFTER.match(lowered)
            and len(re.findall(r"[\w']+", lowered)) >= 3
            and not _WANTS.match(lowered)
            and not _FRAMING.search(lowered)
            and not lowered.rstrip().endswith("?")
        ):
            return True
    return False


#: a question that carries a fact of the speaker's inside it ("How do I wash the duvet cover I bought?",
#: "我下个月去泰国潜水要考什么证？"): something just acquired or begun, or a plan with its date
_TELLS_INSIDE = re.compile(
    r"\b(?:i|we) (?:just |recently |finally )?(?:bought|adopted|inherited|booked|started|moved|signed up|joined|"
    r"ordered|planted|rescued|applied)\b"
)
_CHINESE_TELLS_INSIDE = re.compile(r"我们?(?:刚|刚刚|下个?月|下周|明天|最近|今年|上周|昨天|前天|这周|申请的|买的|养的)")


def _tells_inside(sentence: str) -> bool:
    lowered = sentence.lower().lstrip("\"'“‘(")
    if _HYPOTHETICAL.match(lowered) or lowered.startswith(_CHINESE_HYPOTHETICAL):
        return False
    return bool(_TELLS_INSIDE.search(lowered) or _CHINESE_TELLS_INSIDE.search(sentence))


def _asks_only(sentence: str) -> bool:
    return (
        _asks(sentence)
        and not _tells_before_asking(sentence)
        and not _tells_after_asking(sentence)
        and not _tells_inside(sentence)
    )


def _ends_asking(sentence: str) -> bool:
    if sentence.rstrip().endswith(("?", "？")):
        return True
    if has_cjk(sentence):
        return bool(_CHINESE_ASKING_END.search(sentence.rstrip("。！!. ~～")))
    sentences = _sentences(sentence)
    last = sentences[-1] if sentences else ""
    if last.endswith((".", "!")):
        return False
    return bool(_ENGLISH_ASKING_CLAUSE.match(_LAST_CLAUSE.split(last)[-1].strip().lower()))


def _sentences(text: str) -> list[str]:
    return [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip(" .!?。！？")]


def _asks(sentence: str) -> bool:
    lowered = sentence.lower().lstrip("\"'“‘(")
    return bool(
        _ends_asking(sentence)
        or _REQUEST_OPENERS.search(lowered)
        or lowered.startswith((*_CHINESE_REQUEST_OPENERS, *_CHINESE_QUESTION_OPENERS))
    )


def states_nothing(text: str) -> bool:
    """True when every sentence of `text` is an interjection, a greeting, thanks or an acknowledgement ("hi",
    "ok cool", "谢谢啦", "周末好"): the turn states no fact, so it revises none."""
    sentences = _sentences(text)
    return bool(sentences) and all(_is_interjection(sentence) for sentence in sentences)


def _is_interjection(sentence: str) -> bool:
    if has_cjk(sentence):
        clauses = [c.strip(" .!！。?？").rstrip(_CHINESE_PARTICLES) for c in re.split(r"[，,、\s]+", sentence)]
        clauses = [c for c in clauses if c]
        return bool(clauses) and all(c in _CHINESE_INTERJECTIONS or _CHINESE_GREETING.match(c) for c in clauses)
    words = re.findall(r"[\w']+", sentence)
    if len(words) > 1 and words[-1][:1].isupper() and words[-1].lower() not in _INTERJECTIONS:
        words = words[:-1]  # a name: "Thanks, Mel!"
    return bool(words) and all(word.lower() in _INTERJECTIONS for word in words)


def corrects_itself(text: str) -> bool:
    """True when `text` says it corrects something said just before ("Sorry, I meant Portland, not
    Denver", "Actually she's eight", "我说错了"): the one way a speaker revises their own words of minutes ago."""
    return bool(_SELF_CORRECTION.search(text.lower())) or any(cue in text for cue in _CHINESE_SELF_CORRECTION)


def ends_asking(text: str) -> bool:
    """True when `text`'s last sentence (after any bracketed attachment, "[image: …]") asks
    something: a turn that hands the conversation to the other speaker, whose next turn answers it."""
    return _ends_asking(_ATTACHMENT.sub("", text))


def told_part(text: str) -> str:
    """`text` without its questions: a question ("How do you feel now that it's finished?") asks
    about a change, it does not tell one, so change cues count only where something is told. Of a
    question joined to a statement by a comma ("I quit my job, can you believe it?") the part
    before the last comma is kept."""
    kept = []
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0)
        if sentence.rstrip().endswith(("?", "？")):
            sentence = _LAST_CLAUSE.split(sentence)[0] if _LAST_CLAUSE.search(sentence) else ""
        kept.append(sentence)
    return " ".join(kept)
