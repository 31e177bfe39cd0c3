"""Open-valued life facts (`pcm.life_states`): where a person lives, who employs them, what they
do for a living, what they study, and the languages they can or cannot use.

Home, employer, occupation and field of study are open values: two statements clash when the values
they name are disjoint ("Headingley, Leeds" and "Leeds" do not; "Amazon" and "Stripe" do; "a backend
developer" and "a full-time AI researcher" do). An occupation is read only from a profession's name
("nurse", "程序员"), never from words that also name a pastime ("writer", "runner"), and a wish ("I want
to become a chef") states none. A language is a
facet of its own, `skill:<language>`, whose states exclude each other: "I've never touched
JavaScript" (lacks) against "got my React app building" (uses). A framework counts as its language; a language
given up ("I've given up on Italian", "日语我已经放弃了") is one the speaker lacks now.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pcm.world.names_en_words import CALENDAR_WORDS

#: `pcm.life_states`' test of whether the clause holding `text[start]` is about the speaker now
AboutSpeaker = Callable[[str, int, bool], bool]

#: capitalised words that name no place or organisation: dates, a sentence's first word, holidays,
#: company suffixes
_NOT_NAMES = CALENDAR_WORDS | frozenset("the a an my our this that i inc llc ltd co corp of and st".split())
_NAME = r"((?-i:[A-Z][\w&'.-]*)(?:(?:,\s*|\s+)(?-i:[A-Z][\w&'.-]*))*)"
_SUBJECT = r"(?:i|i'm|i am|i've|i have|we|we're|we are|we've)"

_CHINESE_CITIES = (
    "北京|上海|广州|深圳|杭州|成都|重庆|武汉|南京|西安|天津|苏州|长沙|郑州|青岛|大连|厦门|哈尔滨|沈阳|昆明|"
    "济南|合肥|福州|南昌|宁波|无锡|东莞|佛山|贵阳|南宁|太原|石家庄|兰州|乌鲁木齐|呼和浩特|海口|三亚|拉萨|"
    "香港|澳门|台北|珠海|温州|常州|大理|丽江|桂林|洛阳|烟台"
)
_HOME_EN = re.compile(  # case-insensitive but for the place, which is capitalised
    rf"(?i:\b{_SUBJECT}(?:\s+(?:just|finally|recently|now|still|already|officially))*\s+"
    rf"(?:live|living|moved|relocated|settled|based)\b(?:\s+\w+){{0,4}}?\s+(?:in|to))\s+{_NAME}|"
    rf"(?i:\b(?:living|life|moving) in)\s+{_NAME}|"
    rf"(?i:\b(?:my|our) (?:new )?(?:apartment|flat|house|home|place) in)\s+{_NAME}|"
    rf"(?i:\b(?:(?:i'?m|i am|we'?re|we are)(?:\s+(?:now|officially|finally))*|officially)\s+an?)\s+"
    rf"{_NAME}(?=\s+residents?\b)|"
    rf"(?i:\b(?:i'?m|i am|we'?re|we are) in an? (?:\w+\s+){{0,2}}(?:house|flat|apartment) in)\s+{_NAME}"
)
_HOME_ZH = re.compile(rf"(?:住在|搬到了?|搬去了?|定居(?:在)?|安家(?:在)?|落户(?:在)?)({_CHINESE_CITIES})")

#: companies a Chinese text names without capitals, and the short name each goes by
_CHINESE_EMPLOYERS = {
    "阿里巴巴": "阿里",
    "字节跳动": "字节",
    "蚂蚁集团": "蚂蚁",
    "哔哩哔哩": "B站",
    **{
        name: name
        for name in (
            "阿里|腾讯|字节|百度|华为|美团|京东|网易|小米|拼多多|滴滴|快手|蚂蚁|携程|微软|谷歌|亚马逊|特斯拉|联想|"
            "中兴|大疆|比亚迪|宁德时代|顺丰|万科|平安|新浪|搜狐|B站|小红书|蔚来|小鹏|米哈游|商汤|招商银行|工商银行|"
            "建设银行|中国银行|农业银行|国家电网|中石油|中石化|中国移动|中国电信|中国联通|苹果公司|三星|英特尔|IBM|"
            "甲骨文|德勤|普华永道|安永|毕马威|麦肯锡"
        ).split("|")
    },
}
_ZH_EMPLOYER = "|".join(sorted(_CHINESE_EMPLOYERS, key=len, reverse=True))
_EMPLOYER_EN = re.compile(
    rf"(?i:\b(?:i|we) (?:still |now |currently )?work (?:at|for)|"
    rf"\b(?:i'?m|i am) (?:currently |now |still )?(?:working|employed|interning) (?:at|for)|"
    rf"\b(?:i'?m|i am) (?:an?|the) (?!(?:regular|member|fan|customer|guest|patient|student|volunteer)\b)"
    rf"(?:[\w-]+ ){{0,4}}?(?:at|for)|"
    rf"\b(?:first|second|third|1st|2nd|3rd) (?:day|week|month) (?:at|with)|"
    rf"\b(?:i )?(?:just )?(?:joined|started (?:working )?at|got (?:a|the) job (?:at|with)|got hired (?:at|by)|"
    rf"accepted (?:an|the) offer (?:from|at)|(?:my )?new (?:job|role|position) at)|"
    rf"(?<!lost )(?<!quit )(?<!left )(?<!old )\bmy (?:job|team|manager|boss|coworkers|colleagues|office) at)\s+{_NAME}"
)
_EMPLOYER_ZH = re.compile(
    rf"(?:在|是)({_ZH_EMPLOYER})(?:园区|工作|上班|实习|做|当|写代码|的食堂|的员工|总部)|"
    rf"(?:入职|加入|跳槽到|跳槽去|去了)(?:了)?({_ZH_EMPLOYER})"
)

#: professions (regex → the occupation it names); synonyms share one name so that "a software engineer"
#: and "a backend developer" do not clash. Words that also name a pastime or a side role (writer, artist,
#: photographer, driver, manager, consultant) are left out: they would retire true facts.
_OCCUPATIONS = {
    r"developer|programmer|coder|(?:software |web |backend |frontend |devops )?engineer|"
    r"程序员|开发者|开发工程师|工程师|后端开发|前端开发|码农": "engineer",
    r"researcher|scientist|postdoc|研究员|科学家|博士后": "researcher",
    r"teacher|lecturer|professor|instructor|老师|教师|讲师|教授": "teacher",
    r"nurse|护士": "nurse",
    r"doctor|physician|surgeon|医生|大夫": "doctor",
    r"dentist|牙医": "dentist",
    r"pharmacist|药剂师": "pharmacist",
    r"vet|veterinarian|兽医": "vet",
    r"therapist|psychologist|counsell?or|心理咨询师|心理医生": "therapist",
    r"lawyer|attorney|paralegal|律师": "lawyer",
    r"accountant|bookkeeper|auditor|会计|审计": "accountant",
    r"architect|建筑师": "architect",
    r"chef|厨师": "chef",
    r"barista|咖啡师": "barista",
    r"bartender|调酒师": "bartender",
    r"pilot|飞行员": "pilot",
    r"flight attendant|空姐|空乘": "flight attendant",
    r"firefighter|消防员": "firefighter",
    r"police officer|cop|警察": "police officer",
    r"paramedic|急救员": "paramedic",
    r"electrician|电工": "electrician",
    r"plumber|水管工": "plumber",
    r"carpenter|木匠": "carpenter",
    r"mechanic|修车师傅|机修工": "mechanic",
    r"farmer|农民": "farmer",
    r"journalist|reporter|记者": "journalist",
    r"librarian|图书管理员": "librarian",
    r"realtor|real estate agent|房产中介": "realtor",
    r"translator|interpreter|翻译": "translator",
    r"social worker|社工": "social worker",
    r"civil servant|公务员": "civil servant",
    r"designer|设计师": "designer",
}
_OCCUPATION = "(" + "|".join(_OCCUPATIONS) + ")"
#: a word before a profession's name that says the speaker does not practise it now ("a former nurse",
#: "a huge fan of teachers") or that the name is someone else's ("I'm seeing a therapist": the article
#: must follow the verb, "a/an", and no second article or possessive may come before the name)
_NOT_A_PROFESSION = (
    "(?:not|no|former|ex|retired|aspiring|wannabe|future|amateur|hobby|fan|of|for|with|in|at|to|and|about|"
    "a|an|the|my|your|his|her|our|their)"
)
#: "become" after a wish or a plan states no occupation yet: "I'd love to become a chef", "training to become a
#: paramedic" (the speaker still does what they did)
_WISHED = "".join(
    f"(?<!{wish} to )"
    for wish in (
        "want",
        "wants",
        "wanted",
        "like",
        "love",
        "hope",
        "hoping",
        "used",
        "dream",
        "training",
        "studying",
        "plan",
        "planning",
        "going",
        "trying",
        "aiming",
        "aim",
    )
)
_OCCUPATION_EN = re.compile(
    rf"(?i:\b(?:i'?m|i am|i work as|i'?ve been working as|i'?m working as|hired (?:me )?as|my (?:job|work) as|"
    rf"became|{_WISHED}become|(?<!of )becoming) an? "
    rf"(?:(?!{_NOT_A_PROFESSION}\b)[\w-]+ ){{0,3}}?{_OCCUPATION}s?\b"
    rf"(?!'s|-to-be| (?:tech|friend|fan|husband|wife|parent|family)))"
)
_OCCUPATION_ZH = re.compile(
    rf"(?:我是|我现在是|我目前是|我在[^，。！？,.!?]{{0,12}}?(?:做|当)|当了|转行做|转行当|转做|转型做|全职做|(?<!想)(?<!望)成为了?)"
    rf"(?:一名|一个|一位|名|个)?[^，。！？,.!?的看找去跟和给说问带陪被让约见]{{0,10}}?{_OCCUPATION}"
)

#: a field of study: "majoring in biology", "changed my major to economics", "studying computer science at"
_STUDY_EN = re.compile(
    r"(?i:\bmajor(?:ing)? in|\bmy major (?:is|to)|\b(?:changed|switched) my major to|\b(?:i'?m|i am) studying|"
    r"\bdegree in)\s+(?!(?:for|with|at|in|on|to|the|a|an|my|our|hard|late|abroad|together|tonight|all|up)\b)"
    r"((?:[a-z]+)(?: [a-z]+){0,2}?)(?= at\b| this\b| next\b| because\b|[.,;!?]|$)"
)
_STUDY_ZH = re.compile(r"(?:读|学|是|转到了?|转去了?|换到了?|转了)([\u4e00-\u9fff]{2,5}?)专业")
_STUDY_ALIASES = {"cs": "computer science", "compsci": "computer science", "econ": "economics", "bio": "biology"}

#: languages and frameworks (regex → the language it is), English and Chinese
_LANGUAGES = {
    r"english|英语|英文": "english",
    r"spanish|西班牙语|西语|dele": "spanish",
    r"french|法语|法文|delf|dalf": "french",
    r"german|德语|德文|goethe": "german",
    r"japanese|日语|日文|jlpt": "japanese",
    r"korean|韩语": "korean",
    r"italian|意大利语": "italian",
    r"portuguese|葡萄牙语": "portuguese",
    r"russian|俄语": "russian",
    r"mandarin|普通话|中文|hsk": "mandarin",
    r"cantonese|粤语": "cantonese",
    r"arabic|阿拉伯语": "arabic",
    r"javascript|js|react|vue|angular|node(?:\.js)?|next\.js|typescript": "javascript",
    r"python": "python",
    r"java(?!script)": "java",
    r"rust": "rust",
    r"c\+\+": "c++",
    r"c#": "c#",
    r"ruby|rails": "ruby",
    r"php": "php",
    r"kotlin": "kotlin",
    r"swift(?:ui)?": "swift",
    r"haskell": "haskell",
    r"elixir": "elixir",
    r"scala": "scala",
    r"golang": "go",
    r"sql": "sql",
}
_LANGUAGE = "(" + "|".join(_LANGUAGES) + ")"
_LACKS_EN = re.compile(
    rf"\b(?:never (?:touched|used|written|learned|learnt|studied|coded in|programmed in|spoken)|"
    rf"(?:don'?t|do not|can'?t|cannot|couldn'?t) (?:speak|read|write|code in|program in|understand)|"
    rf"(?:zero|no) experience (?:with|in)|know nothing about|(?:don'?t|do not) know|know zero|never took) "
    rf"(?:a word of |any |a line of )?{_LANGUAGE}\b|"
    rf"\bmy {_LANGUAGE}(?: is|'s) (?:terrible|awful|really bad|so bad|non-?existent)\b|"
    rf"\b(?:zero|no) {_LANGUAGE}\b(?! (?:problems?|issues?|errors?))|"
    rf"\b(?:gave up|given up|giving up|stopped (?:learning|studying)|quit) (?:on |learning |studying )?"
    rf"{_LANGUAGE}\b",
    re.I,
)
_USES_EN = re.compile(
    rf"\b(?:spoke|speaking|chatted|talked|presented|negotiated|interviewed|wrote|writing|coded|coding|built|"
    rf"building|shipped|rewrote|debugged|debugging)(?:\s+[\w'-]+){{0,6}}?\s+in {_LANGUAGE}\b|"
    rf"\bmy {_LANGUAGE} (?:app|project|code|codebase|component|frontend|site|script)s?\b|"
    rf"\bfluent in {_LANGUAGE}\b|\b{_LANGUAGE} fluently\b|"
    rf"\b(?:learning|studying|practi[sc]ing|taking) {_LANGUAGE}\b|"
    rf"\b{_LANGUAGE} (?:tutor|teacher|class|classes|lessons?|course|homework|exam|flashcards|streak)\b|"
    rf"\b(?:i|we) (?:speak|write|code in|program in) {_LANGUAGE}\b|\bmy {_LANGUAGE}(?: is|'s) (?:fluent|conversational|"
    rf"decent|good|solid|pretty good)\b|\bduolingo {_LANGUAGE}\b|\b{_LANGUAGE} (?:for a living|at work|every day)\b|"
    rf"\bpassed (?:my |the )?{_LANGUAGE}\b",
    re.I,
)
_LACKS_ZH = re.compile(
    rf"(?:不会(?:说|讲|写|用)?|完全不懂|没学过|看不懂|听不懂){_LANGUAGE}|{_LANGUAGE}(?:特别|很|非常|超级|太)?(?:差|烂)|"
    rf"一句{_LANGUAGE}都不会|{_LANGUAGE}一点都不会|{_LANGUAGE}\S{{0,3}}一窍不通|没(?:写|用|学)过{_LANGUAGE}|"
    rf"放弃(?:了)?(?:学)?{_LANGUAGE}|不(?:再)?学{_LANGUAGE}了|{_LANGUAGE}[^，,。！？]{{0,4}}?(?:不学了|放弃了)",
    re.I,
)
_USES_ZH = re.compile(
    rf"用{_LANGUAGE}(?:跟|和|与|给|写|开|交流|聊|做|讲|汇报|演讲|面试)|(?:在|开始|报班|自)学{_LANGUAGE}|"
    rf"我会(?:说|讲)?{_LANGUAGE}|天天写{_LANGUAGE}|{_LANGUAGE}[A-C][12]|{_LANGUAGE}N[1-5]|"
    rf"{_LANGUAGE}口语(?:很|挺|特别|非常|超)?(?:好|不错|流利)|{_LANGUAGE}(?:说得)?(?:很|挺|特别|非常)?流利",
    re.I,
)


#: the languages people speak (the others of `_LANGUAGES` are programming languages)
_SPOKEN = (
    "english",
    "spanish",
    "french",
    "german",
    "japanese",
    "korean",
    "italian",
    "portuguese",
    "russian",
    "mandarin",
    "cantonese",
    "arabic",
)
#: "I only speak English": every other spoken language is one the speaker lacks
_ONLY_EN = re.compile(
    rf"\b(?:only|just) (?:speak|know|understand) {_LANGUAGE}\b|\b{_LANGUAGE} is the only language i (?:speak|know)\b",
    re.I,
)
_ONLY_ZH = re.compile(rf"只会(?:说|讲)?{_LANGUAGE}")


def _canonical(names: dict[str, str], found: str) -> str:
    """The name `names` (regex → name) gives the text `found`: "React" → "javascript", "程序员" → "engineer"."""
    return next(name for pattern, name in names.items() if re.fullmatch(pattern, found, re.I))


def _name_tokens(named: str) -> set[str]:
    tokens = (re.sub(r"'s$", "", token.strip(".'-")).lower() for token in re.split(r",\s*|\s+", named))
    return {token for token in tokens if token and token not in _NOT_NAMES}


def _found(pattern: re.Pattern, text: str, about_speaker: AboutSpeaker, chinese: bool) -> list[str]:
    """The first non-empty group of each match of `pattern` in a clause about the speaker."""
    return [next(g for g in m.groups() if g) for m in pattern.finditer(text) if about_speaker(text, m.start(), chinese)]


def home_places(text: str, about_speaker: AboutSpeaker) -> frozenset[str]:
    """The places `text` says its speaker lives in (or moved to), lower case; empty if none."""
    english = _found(_HOME_EN, text, about_speaker, chinese=False)
    chinese = _found(_HOME_ZH, text, about_speaker, chinese=True)
    return frozenset(set().union(*map(_name_tokens, english)) | set(chinese))


def open_values(text: str, about_speaker: AboutSpeaker) -> dict[str, frozenset[str]]:
    """Home, employer, occupation and field of study `text` names for its speaker (facet → values; absent
    if none)."""
    employers = {t for name in _found(_EMPLOYER_EN, text, about_speaker, False) for t in _name_tokens(name)}
    employers |= {_CHINESE_EMPLOYERS[name] for name in _found(_EMPLOYER_ZH, text, about_speaker, True)}
    occupations = _found(_OCCUPATION_EN, text, about_speaker, False) + _found(_OCCUPATION_ZH, text, about_speaker, True)
    fields = {_STUDY_ALIASES.get(f.lower(), f.lower()) for f in _found(_STUDY_EN, text, about_speaker, False)}
    fields |= set(_found(_STUDY_ZH, text, about_speaker, True))
    values = {
        "home": home_places(text, about_speaker),
        "employer": frozenset(employers),
        "occupation": frozenset(_canonical(_OCCUPATIONS, found) for found in occupations),
        "study": frozenset(fields),
    }
    return {facet: found for facet, found in values.items() if found}


def language_skills(text: str, about_speaker: AboutSpeaker) -> dict[str, str]:
    """`skill:<language>` → "lacks" or "uses" for each language `text` says its speaker cannot or does use
    (lacking wins within one text: "never touched JavaScript, but this React app..."; "I only speak English"
    lacks every other spoken language; learning one uses it: "my Portuguese tutor")."""
    skills: dict[str, str] = {}
    for name in _found(_ONLY_EN, text, about_speaker, False) + _found(_ONLY_ZH, text, about_speaker, True):
        only = _canonical(_LANGUAGES, name)
        skills.update((f"skill:{other}", "lacks") for other in _SPOKEN if other != only and only in _SPOKEN)
    for state, english, chinese in (("uses", _USES_EN, _USES_ZH), ("lacks", _LACKS_EN, _LACKS_ZH)):
        for name in _found(english, text, about_speaker, False) + _found(chinese, text, about_speaker, True):
            skills[f"skill:{_canonical(_LANGUAGES, name)}"] = state
    return skills
