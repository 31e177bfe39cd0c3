"""Sports and regular exercise a speaker practises or has stopped (`pcm.life_states`), `sport:<name>`.

"I boulder 3-4 times a week" and "Surgeon says no climbing for at least 9 months" share one word at
most and sit far apart in embedding space, yet the second revises the first. Each sport is a facet of
its own whose states exclude each other: "does" (a habit, a club, a coach, training for a race, back
at it) and "stopped" (quit, given up, not allowed to, gear sold, not done in months). A single outing
says nothing about a habit, nor does a wish, a question, someone else's sport or the past
(`pcm.life_states`' test of the clause).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from pcm.life_values import AboutSpeaker


class _Sport(NamedTuple):
    nouns: str  # the sport and its gerunds ("climbing|bouldering")
    verbs: str  # its verbs in every form; a ball game has none: one plays it
    doer: str  # the one who does it ("climber")
    gear: str  # what one owns, joins or trains for only to practise it ("surfboard", "marathon")
    chinese: str  # its Chinese names and the words for its club or gear
    chinese_verb: str = "(?!)"  # the Chinese verb that alone names it ("不能跑", "别踢了")


_SPORTS: dict[str, _Sport] = {
    "running": _Sport(
        "running|jogging",
        "run|runs|jog|jogs|jogged",
        "runner|jogger",
        "running shoes|garmin|marathon|half marathon|half|10k|5k|ultra|parkrun|run club",
        "跑步|长跑|夜跑|晨跑|跑马|全马|半马|马拉松|跑团|跑量",
        "跑",
    ),
    "climbing": _Sport(
        "climbing|bouldering|rock climbing",
        "climb|climbs|climbed|boulder|boulders|bouldered",
        "climber|boulderer",
        "climbing shoes|crash pad|chalk bag",
        "攀岩|抱石",
    ),
    "swimming": _Sport("swimming|laps", "swim|swims|swum", "swimmer", "goggles|swim club", "游泳"),
    "cycling": _Sport(
        "cycling|biking|road biking|mountain biking",
        "cycle|cycles|cycled|bike|bikes|biked",
        "cyclist",
        "road bike|bike|bicycle|cleats|gran fondo|sportive",
        "骑行|骑车|公路车|自行车|山地车",
        "骑",
    ),
    "tennis": _Sport("tennis", "", "tennis player", "tennis racket|racket|racquet", "网球"),
    "football": _Sport(
        "football|soccer|five-a-side|5-a-side|futsal", "", "footballer", "football boots", "足球|踢球", "踢"
    ),
    "basketball": _Sport("basketball|hoops", "", "basketball player", "", "篮球"),
    "yoga": _Sport("yoga|hot yoga|pilates", "", "yogi", "yoga mat", "瑜伽|普拉提"),
    "gym": _Sport(
        "the gym|gym|lifting|weightlifting|weight training|powerlifting|crossfit",
        "lift|lifts",
        "lifter",
        "gym membership",
        "健身|撸铁|举铁|健身房",
    ),
    "hiking": _Sport("hiking|hillwalking", "hike|hikes|hiked", "hiker", "hiking boots", "徒步|爬山"),
    "skiing": _Sport(
        "skiing|snowboarding",
        "ski|skis|skied|snowboard|snowboards|snowboarded",
        "skier|snowboarder",
        "skis|snowboard|season pass|ski pass",
        "滑雪|单板|双板|雪季卡",
    ),
    "surfing": _Sport("surfing", "surf|surfs|surfed", "surfer", "surfboard|longboard|shortboard|wetsuit", "冲浪"),
    "boxing": _Sport(
        "boxing|kickboxing|muay thai|bjj|jiu[- ]?jitsu|judo|karate|taekwondo|mma|martial arts",
        "box|boxes|boxed|spar|spars|sparred",
        "boxer|fighter",
        "boxing gloves|gloves|dojo|mouthguard",
        "拳击|泰拳|柔术|空手道|跆拳道|散打|武术",
    ),
    "badminton": _Sport("badminton", "", "badminton player", "", "羽毛球"),
    "golf": _Sport("golf", "golfs|golfed", "golfer", "golf clubs|clubs", "高尔夫"),
    "dancing": _Sport(
        "dancing|salsa|ballet|hip hop|dance classes|dance class",
        "dance|dances|danced",
        "dancer",
        "dance shoes",
        "跳舞|舞蹈|街舞|芭蕾",
    ),
}
#: words right after a verb that make it a habit ("I boulder 3-4 times a week", "I swim every morning")
_HABIT = (
    r"(?:about |around |like |at least |still |usually )?(?:\d|every|each|most|twice|three times|four times|"
    r"once a|a few times|daily|regularly|religiously|weekly|on (?:mon|tue|wed|thu|fri|sat|sun|week)|"
    r"before work|after work|in the mornings?|at lunch|at the weekends?|with my (?:club|team|group))"
)
#: what belongs to a practice of one's own ("my climbing gym", "my Tuesday tennis lesson")
_PRACTICE = (
    r"club|coach|class|classes|lessons?|sessions?|group|team|league|partner|buddies|buddy|gym|routine|training|"
    r"program|programme|plan|streak|membership|instructor|teacher|crew|squad|shoes|mat|racket|racquet|board"
)
_AS_USUAL = r"as usual|like always|as always|like every week|again (?:this|last|on|tonight|tomorrow|saturday|sunday)"
_STOP = (
    r"quit|quitting|gave up|given up|giving up|stopped|done with|retired from|taking a break from|"
    r"took a break from|pause|paused|pausing|dropped out of|never picked"
)
_WEEKDAY = r"mon|tue|wed|thu|fri|sat|sun"
#: what one joins to practise a sport, and leaves on stopping ("cancelled my boxing gym membership")
_JOINED = r"membership|club|team|class|dojo"
_UNABLE = r"can'?t|cannot|couldn'?t|not allowed to|banned from|unable to|won'?t be able to|not"
_NOT_NOW = (
    r"for|until|till|anymore|any more|again|at all|right now|at the moment|for now|these days|"
    r"this (?:week|month|year|season)"
)


def _english(sport: _Sport) -> tuple[re.Pattern, re.Pattern]:
    """The "does" and "stopped" expressions of one sport in English."""
    nouns, verbs, gear = sport.nouns, sport.verbs, sport.gear or "(?!)"
    play = rf"(?:play|plays|played|playing|do|does|doing|go|goes|going) (?:{nouns})"
    act = rf"(?:{verbs}|{play})" if verbs else play
    does = (
        rf"\b(?:i|we)\s+(?:still\s+|also\s+|usually\s+|now\s+)?{act}\s+(?:laps\s+)?{_HABIT}|"
        rf"\b(?:my|our) (?:\w+ )?(?:{nouns}) (?:{_PRACTICE})\b|"
        rf"\b(?:i'?m|i am) (?:a |an )?(?:keen |big |regular |serious |avid )?(?:{sport.doer})\b|"
        rf"\b(?:i'?ve|we'?ve|i have) been (?:{nouns}|{play})\s+(?:\w+\s+)?(?:for|since|again|a lot|every|\d|straight)|"
        rf"\b(?:back|got back) (?:to|into) (?:{nouns})\b|\b(?:{nouns})\b[^.!?]{{0,25}}\b(?:{_AS_USUAL})\b|"
        rf"\b(?:{nouns})\b[^.!?,]{{0,20}}\bevery (?:day|morning|evening|night|week|weekend|{_WEEKDAY})|"
        rf"\btraining for (?:my |a |the |our )?(?:first |next )?(?:\w+ )?(?:{gear})\b"
    )
    done = f"{verbs}|" if verbs else ""
    unable = rf"(?:{done}(?:play|do|go|playing|doing|going) (?:{nouns})|{nouns})"
    stopped = (
        rf"\b(?:{_STOP}) (?:on |going to |playing |doing )?(?:my |the )?(?:{nouns})(?! (?:shoes|gear)\b)\b|"
        rf"\b(?:sold|selling|cancell?ed|gave away) (?:my |our )?(?:\w+ )?(?:{gear})\b|"
        rf"\b(?:{_STOP}|cancell?ed|left) (?:my |our |the )?(?:\w+ )?(?:{nouns}) (?:gym )?(?:{_JOINED})\b|"
        rf"\bno (?:more )?(?:{nouns})\b(?=\s*(?:{_NOT_NOW}|[,.!;]|$))|"
        rf"\b(?:{_UNABLE}) {unable}\b(?=\s*(?:{_NOT_NOW}|[,.!;]|$))|"
        rf"\b(?:{nouns})(?:'s| is) over for me\b|"
        rf"\bhaven'?t (?:{done}played (?:{nouns})|been (?:to |on (?:a |my |the )?)?(?:{nouns}|{gear}))\b"
        rf"(?=\s+(?:since|in (?:months|ages|weeks|years|a year|over)|for (?:months|ages|weeks|a year)))"
    )
    return re.compile(does, re.I), re.compile(stopped, re.I)


def _chinese(names: str, verb_alone: str) -> tuple[re.Pattern, re.Pattern]:
    """The "does" and "stopped" expressions of one sport in Chinese."""
    verb = r"(?:去)?(?:打|踢|练|跑|游|做|上|滑|玩|骑)?"
    does = (
        rf"(?:每周|每天|每个?周末|每个?星期|周[一二三四五六日末]|天天|经常|一直|坚持|又去|开始|在练|在学|去练|照常|备战)"
        rf"[^，,。！？]{{0,12}}?(?:{names})|(?:{names})(?:课|教练|俱乐部|队|卡|会员|群|搭子|练了)|"
        rf"(?:{names})(?:[一二三四五六七八九十两\d半]+(?:年|个月)了|第[一二三四五六七八九十\d]+年)"
    )
    stopped = (
        rf"(?:不能|没法|不可以|不让|别再?|停了|放弃了?|不再|退出了?)(?:再)?{verb}(?:{names})|"
        rf"(?:不能|没法|不可以|别再?|再也没)(?:再)?(?:{verb_alone})(?:过)?(?:了|步|球|车)?(?=[，,。！？]|$)|"
        rf"(?:{names})[^。！？]{{0,10}}?(?:停了|不去了|不练了|不打了|不踢了|不跑了|不骑了|放弃了|断了|搁置了|告别了|退了)|"
        rf"(?:好久|很久|几个月|半年|一年|好几个月|再也)(?:都)?没{verb}(?:过)?(?:{names})"
    )
    return re.compile(does), re.compile(stopped)


@lru_cache(maxsize=1)
def _any_sport() -> re.Pattern:
    """Any word of any sport: most texts name none, and are passed over at once."""
    words = "|".join(part for sport in _SPORTS.values() for part in sport if part and part != "(?!)")
    return re.compile(rf"(?:\b|(?<=[\u4e00-\u9fff]))(?:{words})", re.I)


@lru_cache(maxsize=1)
def _compiled() -> dict[str, tuple[tuple[re.Pattern, re.Pattern], tuple[re.Pattern, re.Pattern]]]:
    return {name: (_english(sport), _chinese(sport.chinese, sport.chinese_verb)) for name, sport in _SPORTS.items()}


def sport_habits(text: str, about_speaker: AboutSpeaker) -> dict[str, str]:
    """`sport:<name>` → "does" or "stopped" for each sport `text` says its speaker practises or has stopped
    (stopping wins within one text: "cancelled my gym membership, I'm not lifting anymore")."""
    habits: dict[str, str] = {}
    if not _any_sport().search(text):
        return habits
    for sport, ((does_en, stopped_en), (does_zh, stopped_zh)) in _compiled().items():
        for state, english, chinese in (("stopped", stopped_en, stopped_zh), ("does", does_en, does_zh)):
            found = any(about_speaker(text, m.start(), False) for m in english.finditer(text)) or any(
                about_speaker(text, m.start(), True) for m in chinese.finditer(text)
            )
            if found:
                habits[f"sport:{sport}"] = state
                break
    return habits
