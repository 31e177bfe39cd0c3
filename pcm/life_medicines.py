"""Medicines a speaker takes now, by class (`pcm.life_states`), `medicine:<class>`: an open value, the generic names.

"week 3 on sertraline" and "I've been on 20mg citalopram about a year" share no word, yet the first revises
the second: a person takes one antidepressant, one statin, one acid reducer, one ADHD medicine, one blood thinner
and one method of birth control at a time. A drug is read where the speaker takes it ("on", "taking",
"started on", "my", a dose, "在吃", "换成"), never where it is given up ("came off", "switched from", "停了"),
someone else's, past, wished or only asked about (`pcm.life_states`' test of the clause).
"""

from __future__ import annotations

import re
from functools import lru_cache

from pcm.life_values import AboutSpeaker

#: class → generic name → (English names, generic and brands; Chinese names)
_MEDICINES: dict[str, dict[str, tuple[str, str]]] = {
    "antidepressant": {
        "sertraline": ("sertraline|zoloft|lustral", "舍曲林|左洛复"),
        "escitalopram": ("escitalopram|lexapro|cipralex", "艾司西酞普兰|来士普|百洛特"),
        "citalopram": ("(?<!es)citalopram|celexa|cipramil", "(?<!艾司)西酞普兰|喜普妙"),
        "fluoxetine": ("fluoxetine|prozac", "氟西汀|百忧解|优克"),
        "paroxetine": ("paroxetine|paxil|seroxat", "帕罗西汀|赛乐特"),
        "venlafaxine": ("venlafaxine|effexor", "文拉法辛|怡诺思"),
        "duloxetine": ("duloxetine|cymbalta", "度洛西汀|欣百达"),
        "bupropion": ("bupropion|wellbutrin", "安非他酮"),
        "mirtazapine": ("mirtazapine|remeron", "米氮平|瑞美隆"),
        "vortioxetine": ("vortioxetine|trintellix|brintellix", "伏硫西汀|心达悦"),
        "fluvoxamine": ("fluvoxamine|luvox", "氟伏沙明|兰释"),
    },
    "statin": {
        "lovastatin": ("lovastatin|mevacor|altoprev", "洛伐他汀"),
        "atorvastatin": ("atorvastatin|lipitor", "阿托伐他汀|立普妥"),
        "rosuvastatin": ("rosuvastatin|crestor", "瑞舒伐他汀|可定"),
        "simvastatin": ("simvastatin|zocor", "辛伐他汀|舒降之"),
        "pravastatin": ("pravastatin|pravachol", "普伐他汀|普拉固"),
        "pitavastatin": ("pitavastatin|livalo", "匹伐他汀|力清之"),
    },
    "acid_reducer": {
        "omeprazole": ("(?<!es)omeprazole|prilosec|losec", "(?<!埃索美拉唑)(?<!艾司)奥美拉唑|洛赛克"),
        "esomeprazole": ("esomeprazole|nexium", "埃索美拉唑|艾司奥美拉唑|耐信"),
        "pantoprazole": ("pantoprazole|protonix", "泮托拉唑|潘妥洛克"),
        "lansoprazole": ("lansoprazole|prevacid", "兰索拉唑|达克普隆"),
        "rabeprazole": ("rabeprazole|aciphex|pariet", "雷贝拉唑|波利特"),
        "famotidine": ("famotidine|pepcid", "法莫替丁"),
        "dexlansoprazole": ("dexlansoprazole|dexilant", "右兰索拉唑"),
        "vonoprazan": ("vonoprazan|voquezna|takecab", "伏诺拉生|沃克"),
    },
    "adhd": {
        "lisdexamfetamine": ("lisdexamfetamine|vyvanse|elvanse", "赖右苯丙胺"),
        "amphetamine": ("adderall|amphetamine", "阿得拉|苯丙胺"),
        "methylphenidate": ("methylphenidate|ritalin|concerta|medikinet", "哌甲酯|专注达|利他林"),
        "atomoxetine": ("atomoxetine|strattera", "托莫西汀|择思达"),
        "guanfacine": ("guanfacine|intuniv", "胍法辛"),
    },
    "anticoagulant": {
        "warfarin": ("warfarin|coumadin", "华法林"),
        "apixaban": ("apixaban|eliquis", "阿哌沙班|艾乐妥"),
        "rivaroxaban": ("rivaroxaban|xarelto", "利伐沙班|拜瑞妥"),
        "dabigatran": ("dabigatran|pradaxa", "达比加群|泰毕全"),
        "edoxaban": ("edoxaban|savaysa|lixiana", "依度沙班"),
    },
    "birth_control": {
        "pill": (
            "the pill|(?:birth control|bc) pills?|combined pill|mini ?pill|yaz|yasmin|microgynon",
            "短效避孕药|优思明|妈富隆",
        ),
        "iud": ("iud|coil|mirena|kyleena|paragard", "上环|节育环|曼月乐"),
        "implant": ("implant|nexplanon", "皮埋|皮下埋植"),
        "patch": ("the patch|birth control patch", "避孕贴"),
        "ring": ("nuvaring|the ring|birth control ring", "避孕环"),
        "injection": ("depo(?:-provera)?(?: shot)?|birth control (?:shot|injection)", "避孕针"),
    },
}

#: what takes a drug now, just before its name ("week 3 on", "got put on", "my", "20mg", "switched to")
_TAKES_BEFORE_EN = re.compile(
    r"(?:\b(?:on|onto|taking|take|takes|start(?:ed|ing)?(?: on)?|put (?:me )?on|prescribed(?: me)?|gave me|"
    r"switch(?:ed|ing)? (?:me )?to|mov(?:ed|ing) (?:me )?to|chang(?:ed|ing) (?:me )?to|bumped (?:me )?to|"
    r"upped (?:my |me )?(?:to )?|my|using|got|had|approved|refill(?:ed|ing)?(?: (?:my|the))?|"
    r"from [\w-]+(?: [\w-]+)? to|swapped [\w-]+ for)|\d+ ?mg(?: of)?)"
    r"(?: (?:the|a|my|some|generic|daily|low[- ]dose|\d+ ?mg(?: of)?))*\s+$",
    re.I,
)
#: what tells, just after its name, that the speaker takes it ("zoloft 50mg", "crestor 10 —", "makes me yawn")
_TAKES_AFTER_EN = re.compile(
    r"^(?:\s*(?:xr|er|ir|xl|sr)?\s*\d+(?: ?mg)?\b|\s+(?:makes?|is making|gives?|has me|keeps?|"
    r"is (?:working|helping|kicking in)|isn'?t working|helps?|seems to|dose|prescription|refill|side effects?|"
    r"co-?pay|prior auth|script|for my|every (?:morning|night|day)|at night|daily|put in|inserted|fitted|"
    r"was put in|got put in|removed))",
    re.I,
)
_TAKES_BEFORE_ZH = re.compile(
    r"(?:在吃|吃了|吃着|开始吃|改吃|服用|换成了?|换到了?|改成了?|改|换了|开了|开的|每天吃|吃上了?|用上了?|上了|打了|"
    r"一片|一粒|每晚|每天)\s*$"
)
_TAKES_AFTER_ZH = re.compile(
    r"^(?:\s*\d+\s*(?:mg|毫克)|吃了|已经吃|每天|每次|一天|的副作用|让我|副作用|吃完|快吃完|刚开始|放了|"
    r"[一二三四五六七八九十两半\d]+(?:天|周|个月|年)了?)"
)
#: what gives a drug up, just before its name ("came off", "switched from", "instead of", "停了")
_LEAVES_BEFORE_EN = re.compile(
    r"\b(?:off|stopped|(?<!to )stop|quit|(?:stopped|quit|stop) taking|from|instead of|no longer on|not on|tapering|"
    r"tapered|weaned|was on|took|used to take|swapped|removed|took out|out)\b(?: (?:the|my|of|\d+ ?mg(?: of)?))*\s+$",
    re.I,
)
_LEAVES_BEFORE_ZH = re.compile(r"(?:停了|停掉|不吃|停|把|从|之前吃|以前吃)\s*$")
_LEAVES_AFTER_ZH = re.compile(r"^(?:停了|停掉了|不吃了|换成|换到|换掉|改成|取了|取出来)")
#: a question that weighs a drug ("should I ask about switching to wellbutrin?", "要不要换成…") says nothing taken
_WEIGHS = re.compile(
    r"\b(?:should (?:i|we)|worth|what about|thinking (?:about|of)|considering|ask (?:about|for)|if|will they|would)\b|"
    r"要不要|该不该|考虑|能不能换|如果|要是",
    re.I,
)
#: an English question tells a drug is the speaker's only where it names a dose or the speaker
_DOSE_OR_SPEAKER = re.compile(r"\d+ ?mg|\b(?:i|i'm|i've|my|me)\b", re.I)
_CLAUSE_END = re.compile(r"[,;.!?，；。！？\n—]")
#: a doctor acting on the speaker ("my doctor put me on lexapro", "医生给我开了舍曲林"): the drug is the speaker's
_TO_SPEAKER = re.compile(r"\bme\b|给我|让我", re.I)


def _names(english: bool) -> dict[str, list[tuple[str, re.Pattern]]]:
    return {
        medicine_class: [
            (generic, re.compile(rf"\b(?:{names[0]})\b", re.I) if english else re.compile(names[1]))
            for generic, names in drugs.items()
        ]
        for medicine_class, drugs in _MEDICINES.items()
    }


@lru_cache(maxsize=1)
def _compiled() -> tuple[re.Pattern, dict, dict]:
    every = "|".join(part for drugs in _MEDICINES.values() for names in drugs.values() for part in names)
    return re.compile(every, re.I), _names(True), _names(False)


def _clause(text: str, match: re.Match) -> tuple[int, re.Match | None]:
    """Where the clause holding `match` starts, and the mark that ends it (None at the end of `text`)."""
    start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, match.start())), default=0)
    return start, _CLAUSE_END.search(text, match.end())


def _taken(text: str, match: re.Match, english: bool) -> bool | None:
    """True where the speaker takes the matched drug, False where they give it up, None where neither is said."""
    before, after = text[max(0, match.start() - 40) : match.start()], text[match.end() : match.end() + 30]
    if english:
        if _LEAVES_BEFORE_EN.search(before):
            return False
        return bool(_TAKES_BEFORE_EN.search(before) or _TAKES_AFTER_EN.search(after)) or None
    if _LEAVES_BEFORE_ZH.search(before) or _LEAVES_AFTER_ZH.search(after):
        return False
    return bool(_TAKES_BEFORE_ZH.search(before) or _TAKES_AFTER_ZH.search(after)) or None


def _asked_not_told(text: str, match: re.Match, english: bool, compared: bool) -> bool:
    """Whether the clause holding `match` asks and weighs the drug, compares it with another of its class
    (`compared`), or, in English, says nothing of the speaker's own ("is it ok to drink on 20mg citalopram?"
    tells it is theirs)."""
    start, end = _clause(text, match)
    if not end or end.group() not in "?？":
        return False
    clause = text[start : end.end()]
    return compared or bool(_WEIGHS.search(clause)) or (english and not _DOSE_OR_SPEAKER.search(clause))


def _given_to_speaker(text: str, match: re.Match) -> bool:
    """Whether a clause about someone else gives the drug to the speaker ("my doctor put me on lexapro")."""
    start, _ = _clause(text, match)
    return bool(_TO_SPEAKER.search(text, start, match.start())) and not _WEIGHS.search(text, start, match.start())


def medicines_taken(text: str, about_speaker: AboutSpeaker) -> dict[str, frozenset[str]]:
    """`medicine:<class>` → the generic names of the drugs of that class `text` says its speaker takes now; of a
    switch ("moved me from lexapro to zoloft", "立普妥换成了可定") only the drug taken now."""
    any_drug, english_names, chinese_names = _compiled()
    if not any_drug.search(text):
        return {}
    taken: dict[str, frozenset[str]] = {}
    for medicine_class in _MEDICINES:
        found = [
            (generic, match, english)
            for english, names in ((True, english_names), (False, chinese_names))
            for generic, pattern in names[medicine_class]
            for match in pattern.finditer(text)
        ]
        clauses = [_clause(text, match)[0] for _, match, _ in found]
        kept = {
            generic
            for (generic, match, english), clause in zip(found, clauses)
            if _taken(text, match, english)
            and not _asked_not_told(text, match, english, clauses.count(clause) > 1)
            and (about_speaker(text, match.start(), not english) or _given_to_speaker(text, match))
        }
        if kept:
            taken[f"medicine:{medicine_class}"] = frozenset(kept)
    return taken
