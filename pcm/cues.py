"""Linguistic cues about how a new statement relates to what the user said before.

Offline, PCM has no model that reasons about contradiction (the bundled 135M LM
separates consistent / novel / contradicting inputs at chance level), so the router
also counts expressions whose meaning is about change, addition or routine, in English
and Chinese. Each family is a list of general expressions, not words of any one
scenario; `cue_counts` reports how many expressions of each family a text contains.

- change:    a state has ended or been replaced ("no longer", "switched to", "moved to",
             "these days", "new job", "辞职", "搬到", "现在", "变成")
- additive:  something joins what is known ("also", "as well", "started learning",
             "signed up", plans such as "next month", "也", "另外", "打算")
- routine:   an episode of something ongoing ("again", "still", "today", "this morning",
             "又", "今天")
- exclusive: one thing takes all the room ("only", "everything", "whole", "只", "全部")
- negation:  "not", "never", "n't", "不", "没"

Change cues count only where something is told, not asked (`pcm.speech_acts.told_part`); what a
turn does besides telling (asks, requests, corrects itself) is read in `pcm.speech_acts`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from pcm.speech_acts import told_part

_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_PERIODS = "week|weekend|month|year|semester|term|spring|summer|autumn|fall|winter|quarter"
_THINGS_REPLACED = (
    "job|house|flat|apartment|home|place|city|manager|boss|team|role|position|company|employer|school|"
    "programme|program|major|advisor|supervisor|partner|girlfriend|boyfriend|car|phone|laptop|stack|"
    "favou?rite"
)

#: "now" closing a duration ("for a while now", "three years now") says how long something has
#: lasted, not that it changed; the unit must be a word of its own ("on Saturdays now", "full-time now"
#: are changes)
_AFTER_A_DURATION = "".join(
    f"(?<![^a-z-]{unit} )"
    for unit in (
        "while",
        "ages",
        "time",
        "year",
        "years",
        "month",
        "months",
        "week",
        "weeks",
        "day",
        "days",
        "hour",
        "hours",
    )
)

#: "used to" after these means accustomed ("getting used to a new routine"), not a past habit
_NOT_ACCUSTOMED = "".join(
    f"(?<!{word} )"
    for word in (
        "get",
        "gets",
        "getting",
        "got",
        "be",
        "being",
        "been",
        "am",
        "i'm",
        "is",
        "are",
        "you're",
        "we're",
        "was",
        "were",
    )
)

ENGLISH: dict[str, tuple[str, ...]] = {
    "change": (
        r"no longer",
        r"not any ?more",
        r"any ?more",
        r"no more",
        _NOT_ACCUSTOMED + r"used to",
        r"these days",
        r"nowadays",
        r"from now on",
        r"now that",
        r"(?<!right )(?<!just )(?<!for )" + _AFTER_A_DURATION + r"now(?! and then)",
        r"instead",
        r"change of plans?",
        r"switch(?:ed|ing)? (?:to|over|from|back)",
        r"mov(?:ed|ing) (?:to|over|into|from|out|away|back)",
        r"migrat(?:ed|ing|ion)",
        r"rewr(?:ote|itten|iting)",
        r"replac(?:ed|ing)",
        r"convert(?:ed|ing)",
        r"pivot(?:ed|ing)?",
        r"transferr?(?:ed|ing)",
        r"quit(?:ting)?",
        r"left (?:my|the|our|\w+ (?:school|job))",
        r"dropped out",
        r"resign(?:ed|ing)",
        r"retir(?:ed|ing)",
        r"handed in (?:my|our) notice",
        r"gave (?:up|away)",
        r"giving up",
        r"sold (?:my|our|the)",
        r"shut (?:down|the)",
        r"broke up",
        r"split up",
        r"called off",
        r"separate ways",
        r"divorc(?:ed|ing)",
        r"ended(?! up)",
        r"single again",
        r"graduated",
        r"bec(?:a|o)me",
        r"turned into",
        r"not looking back",
        r"haven'?t (?:touched|used|been|had)",
        rf"new (?:{_THINGS_REPLACED})",
        r"first (?:day|week|month) (?:at|as|in)",
        r"started (?:at|as) ",
        r"joined (?:\w+ )?as",
        r"took (?:a|the) (?:job|position|role)",
    ),
    "additive": (
        r"also",
        r"too",
        r"as well",
        r"in addition",
        r"besides",
        r"alongside",
        r"on the side",
        r"another",
        r"started (?:learning|taking|picking|getting|playing|running|writing|going|doing|reading|to)",
        r"start(?:ing)? to",
        r"pick(?:ed|ing)? up",
        r"got (?:really )?into",
        r"getting into",
        r"signed up",
        r"enrolled",
        r"joined",
        r"adding",
        r"thinking (?:about|of)",
        r"planning",
        r"plan to",
        r"want to",
        r"going to",
        r"hoping to",
        rf"next (?:{_PERIODS})",
        r"for the first time",
        r"recently",
        r"lately",
        r"new hobby",
        r"on weekends",
        r"just for fun",
        r"been asked",
        r"invited",
    ),
    "routine": (
        r"again",
        r"still",
        r"as usual",
        r"as always",
        r"today",
        r"tonight",
        r"this (?:morning|afternoon|evening|week)",
        r"yesterday",
        r"last night",
        rf"on (?:{_DAYS})",
        r"over the weekend",
        r"this weekend",
        r"in a row",
        r"spent (?:the|all|my)",
        r"finally",
        r"just (?:finished|merged|scored|got|had|did)",
        r"every (?:day|morning|evening|night|week)",
    ),
    "exclusive": (
        r"only",
        r"everything",
        r"every",
        r"whole",
        r"entire",
        r"all (?:my|our|the)",
        r"full-time",
        r"exclusively",
    ),
    "negation": (r"not", r"never", r"[a-z]*n't", r"cannot", r"no"),
}

CHINESE: dict[str, tuple[str, ...]] = {
    "change": (
        "不再",
        "不干",
        "换成",
        "换了",
        "换到",
        "改成",
        "改用",
        "改为",
        "改了",
        "辞职",
        "离职",
        "跳槽",
        "入职",
        "搬到",
        "搬家",
        "搬去",
        "转行",
        "转做",
        "转到",
        "转专业",
        "转了",
        "变成",
        "变了",
        "放弃",
        "分手",
        "离婚",
        "现在",
        "如今",
        "已经",
        "早就不",
        "戒了",
        "卖掉",
        "卖了",
        "毕业",
        "退休",
        "迁移",
        "下线",
        "不用了",
        "不做",
        "退出",
        "以后",
        "从此",
    ),
    "additive": (
        "也",
        "还",
        "另外",
        "此外",
        "顺便",
        "开始学",
        "开始",
        "报了",
        "加入",
        "打算",
        "准备",
        "下个月",
        "下周",
        "明年",
        "第一次",
        "迷上",
        "最近",
        "辅修",
        "想学",
        "想要",
    ),
    "routine": ("又", "今天", "昨天", "今早", "今晚", "早上", "晚上", "周末", "照常", "还是", "一整天", "终于"),
    "exclusive": ("只", "全部", "整个", "都", "全职"),
    "negation": ("不", "没", "别"),
}

FAMILIES = tuple(ENGLISH)


@lru_cache(maxsize=1)
def _compiled() -> dict[str, list[re.Pattern]]:
    return {
        family: [re.compile(rf"(?<![a-z']){expression}(?![a-z])") for expression in expressions]
        for family, expressions in ENGLISH.items()
    }


def cue_counts(text: str) -> dict[str, int]:
    """How many expressions of each family (`FAMILIES`) occur in `text` (change: in its sentences
    that are not questions)."""
    return dict(zip(FAMILIES, _counts(text)))


@lru_cache(maxsize=4096)
def _counts(text: str) -> tuple[int, ...]:
    told = told_part(text)
    lowered, told_lowered = f" {text.lower()} ", f" {told.lower()} "
    return tuple(
        sum(1 for p in _compiled()[family] if p.search(told_lowered if family == "change" else lowered))
        + sum(1 for cue in CHINESE[family] if cue in (told if family == "change" else text))
        for family in FAMILIES
    )


#: a first-person opening that tells something begun or acquired ("Just bought a campervan!", "Signed up
#: for a pottery class", "We're fostering a kitten", "最近入了一台胶片机", "我开始每周去游泳了")
_ONSET = re.compile(
    r"(?:^|[.!?]\s+)(?:(?:so|ok|okay|well|guess what|big news|update)[,:!]?\s+)?"
    r"(?:i|we|i've|we've|i'm|we're)?\s*(?:(?:just|finally|recently|officially|also|have|'ve)\s+){0,2}"
    r"(?:(?:started|began|starting)(?! to (?:realize|realise|think|feel|see|wonder|understand|notice|believe|worry))|"
    r"signed up|enrolled|joined|got accepted|booked|bought|adopted|brought home|"
    r"got (?:a|an|my|our) (?:new |first )?(?!job on)|opened|took up|picked up|treated myself to|"
    r"(?:started |am |are )?fostering|signed (?:my|our|a)|launched|moved in)\b"
)
_CHINESE_ONSET = re.compile(
    r"^(?:跟你说个事[，,]?)?(?:我们?|最近|这个月|今天|上周|下个月)*(?:也|还|刚|刚刚|已经)?(?:下班后|周末)?"
    r"(?:开始|报了|报名|入了|买了|迷上|领养|收养|开了个?|加入了|办了)"
)
#: an onset of something known again ("started running again", "又开始", "重新") is an episode of it, and
#: one long past ("I started playing guitar five years ago") is no news
_NOT_NEW = re.compile(r"\bagain\b|\bback (?:to|into)\b|\b(?:years?|decades?) (?:ago|back)\b|\bwhen i was\b")


def tells_onset(text: str) -> bool:
    """Whether `text` opens a told sentence with something the speaker has just begun, joined or
    acquired: a new fact about them, whatever its similarity to what they said before."""
    told = told_part(text).strip()
    lowered = told.lower()
    if _NOT_NEW.search(lowered) or "重新" in told or "又" in told:
        return False
    return bool(_ONSET.search(lowered) or _CHINESE_ONSET.search(told))
