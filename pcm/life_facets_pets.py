"""Life states of pets (`pcm.life_facets` joins them to its table): whether a person has pets, cats or dogs,
avoids them (an allergy, a fear), or has lost one (a death, a pet rehomed), each facet's states in order of
priority as general English and Chinese expressions."""

from __future__ import annotations

import re
from functools import lru_cache

from pcm.life_facets_diet import NEGATION

_DOGS = (
    r"dogs?|pupp(?:y|ies)|golden retrievers?|labradors?|corgis?|husk(?:y|ies)|beagles?|poodles?|pugs?|greyhounds?|"
    r"dachshunds?|border collies?|german shepherds?|chihuahuas?"
)

#: a pet's death, or its going for good ("Our old lab passed in his sleep", "家里的猫昨天走了")
_GONE_EN = (
    r"(?:\w+ )?(?:died|passed away|passed on|passed (?:in|yesterday|today|last|this|on)|was put to sleep|"
    r"(?:was|were|had to be) put down|(?:got|was) hit by a car|crossed the rainbow bridge|(?:was|got) rehomed|"
    r"(?:has been|is still|'s been) missing for (?:weeks|months|a year|\w+ (?:weeks|months)))"
)
_WHEN_ZH = r"(?:昨天|今天|前天|上周|上个月|今早|早上|晚上|昨晚|凌晨|下午|已经|刚|还是|也|突然)*"
_GONE_ZH = r"(?:去世|走了|没了|死了|离开了|过世|病逝|丢了|送人了|走失|永远睡着了|安乐死了|飞走了)"


def _gone(animals: str, animals_zh: str) -> tuple[str, str, str]:
    """The state "lost" of a facet of pets whose names are `animals` (English) and `animals_zh`."""
    english = (
        rf"\b(?:my|our) (?!childhood )(?:[\w-]+ )?(?:{animals})\b,? {_GONE_EN}\b|"
        rf"\bput (?:(?:my|our) (?:[\w-]+ )?(?:{animals})|(?-i:[A-Z][a-z]+)) (?:down|to sleep)\b|"
        rf"\b(?:lost|had to put down|put down|buried|said goodbye to|rehomed|had to rehome|gave away|gave) "
        rf"(?:my|our|the) (?:[\w-]+ )?(?:{animals})\b(?! food| toys?\b)|"
        rf"\b(?:my|our) (?:[\w-]+ )?(?:{animals})'s ashes\b"
    )
    chinese = (
        rf"(?:{animals_zh}){_WHEN_ZH}{_GONE_ZH}|把(?:{animals_zh})送(?:人|走|回)|"
        rf"(?:{animals_zh})(?:去了?(?:喵星|汪星))|(?:{animals_zh})[^。！？]{{0,10}}?没(?:救|抢救)过来"
    )
    return "lost", english, chinese


#: facet → ((state, English expression, Chinese expression), ...), as `pcm.life_facets.FACETS`
PET_FACETS: dict[str, tuple[tuple[str | None, str, str], ...]] = {
    "pets": (
        _gone(
            rf"pets?|cats?|kittens?|dogs?|{_DOGS}|rabbits?|bunn(?:y|ies)|hamsters?|guinea pigs?|parrots?|budgies?|"
            r"fish|tortoises?|turtles?|ferrets?|rats?|mice|birds?|cockatiels?|budgies?|parakeets?|axolotls?|"
            r"bearded dragons?|lizards?|geckos?|snakes?|chickens?|hens?",
            "猫|猫咪|猫猫|狗|狗狗|兔子|仓鼠|鹦鹉|乌龟|金鱼|豚鼠|荷兰猪|布偶|柯基|金毛",
        ),
        (
            "none",
            rf"\b{NEGATION} (?:have|had|own|owned) (?:any )?pets?\b|\bno pets\b|\bpet-free\b|\bnot a pet person\b",
            r"没(?:有)?养(?:过)?(?:宠物|猫|狗)|不养(?:宠物|猫|狗)|从(?:来)?没养过",
        ),
        (
            "has",
            r"\b(?:my|our) (?:cats?|dogs?|pupp(?:y|ies)|kittens?|pups?|parrots?|parakeets?|hamsters?|rabbits?|"
            r"bunn(?:y|ies)|husk(?:y|ies)|labradors?|corgis?|beagles?|poodles?|retrievers?|terriers?)\b|"
            r"\bwalk(?:ing|ed)? (?:the|my|our|both) (?:dogs?|huskies|pups?)\b|"
            r"\badopted (?:a|an|two) (?:cats?|dogs?|pupp(?:y|ies)|kittens?|rescue)\b|"
            r"(?-i:\b[A-Z][a-z]+) the (?:cat|dog|puppy|kitten|pup|bunny|rabbit|hamster|parrot)\b|"
            r"\b(?:my|our) (?:\w+ )?(?:bearded dragons?|lizards?|snakes?|geckos?|turtles?|tortoises?|fish tank|"
            r"guinea pigs?|ferrets?|horses?)\b|\blitter box\b|\blet the (?:dogs?|pupp(?:y|ies)|pups?) out\b|"
            r"\bfeed(?:ing)? the (?:cats?|dogs?)\b",
            r"我家(?:的)?(?:猫|狗|橘猫|狗狗|猫咪|主子)|我的(?:猫|狗)|养了(?:一|两|三)?(?:只|条)|铲屎|猫粮|狗粮|猫砂|主子|遛狗",
        ),
    ),
    # an allergy to (or fear of) cats or dogs excludes living with one ("allergic to cats" / "our two Maine Coons")
    "cats": (
        _gone(r"cats?|kittens?|kitty|tabby|ragdolls?|maine coons?", "猫|猫咪|猫猫|橘猫|主子|布偶|英短|美短|狸花"),
        (
            "avoids",
            r"\ballergic to cats\b|\bcat allergy\b|\b(?:afraid|scared|terrified) of cats\b",
            r"对猫(?:毛)?(?:严重|特别|很)?过敏|猫毛过敏|怕猫",
        ),
        (
            "has",
            r"\b(?:my|our) (?!childhood )(?:\w+ )?(?:cats?|kittens?|kitty|maine coons?|tabby|ragdolls?|siamese)\b|"
            r"\b(?:i|we) (?:have|got|adopted) (?:a|an|two|three) (?:\w+ )?(?:cats?|kittens?)\b",
            r"我家(?:的)?(?:猫|橘猫|猫咪|主子)|养了(?:一只|两只|只)?\S{0,2}猫|铲屎",
        ),
    ),
    "dogs": (
        _gone(rf"dogs?|labs?|{_DOGS}", "狗|狗狗|金毛|柯基|哈士奇|边牧|泰迪|柴犬"),
        (
            "avoids",
            r"\ballergic to dogs\b|\bdog allergy\b|\b(?:afraid|scared|terrified) of dogs\b",
            r"对狗(?:毛)?(?:严重|特别|很)?过敏|怕狗",
        ),
        (
            "has",
            rf"\b(?:my|our) (?!childhood )(?:\w+ )?(?:{_DOGS})\b|"
            rf"\bwalk(?:ing|ed)? (?:the|my|our|both) (?:dogs?|{_DOGS})\b",
            r"我家(?:的)?(?:狗|狗狗|金毛|柯基|哈士奇|边牧|泰迪|柴犬)|养了(?:一只|两只|只|条|一条)?(?:狗|金毛|柯基|哈士奇|边牧|泰迪|柴犬)|"
            r"遛狗",
        ),
    ),
}


_PET = (
    r"dog|cat|puppy|pup|kitten|kitty|bunny|rabbit|hamster|parrot|guinea pig|budgie|tortoise|turtle|ferret|rat|"
    r"hen|chicken|lizard|gecko|snake|horse|cockatiel|parakeet|lab|labrador|retriever|corgi|husky|beagle|poodle|"
    r"pug|greyhound|dachshund|collie|terrier|spaniel|shepherd"
)
_PET_ZH = r"猫|猫咪|狗|狗狗|兔子|兔|仓鼠|鹦鹉|乌龟|金鱼|豚鼠|荷兰猪|柯基|金毛|哈士奇|边牧|泰迪|柴犬|布偶|橘猫|英短"
_NAME = r"((?-i:[A-Z][a-z]+))"
#: a name given as a pet's ("our beagle, Biscuit", "Mochi the kitten", "我养了一只兔子，叫团子")
_NAMED_EN = re.compile(
    rf"\b(?:{_PET})s?,? (?:named|called) {_NAME}|{_NAME} the (?:[\w-]+ )?(?:{_PET})\b|"
    rf"\b(?:my|our) (?:[\w-]+ )?(?:{_PET}),? {_NAME}\b",
    re.I,
)
_NAMED_ZH = re.compile(rf"(?:{_PET_ZH})[^。！？]{{0,8}}?(?:叫|名字叫|取名叫?)([\u4e00-\u9fff]{{1,3}})")
_NOT_PET_NAMES = frozenset("I The A And But So He She It We They Is Was Has Had Who Which That Just".split())
#: "lost / buried / said goodbye to" then a capitalised word may be a pet's name ("We lost Biscuit in May")
_ANY_LOSS = re.compile(
    rf"{_GONE_EN}|\bput \w+ (?:down|to sleep)\b|\b(?:lost|buried|said goodbye to) (?-i:[A-Z])|{_GONE_ZH}", re.I
)


def may_lose_a_pet(text: str) -> bool:
    """Whether `text` has any expression of a loss: most texts have none, and are passed over at once."""
    return bool(_ANY_LOSS.search(text))


@lru_cache(maxsize=65536)
def pet_names(text: str) -> frozenset[str]:
    """The names `text` gives its speaker's pets (or anyone's: whose pet it is, the loss tells)."""
    names = {name for match in _NAMED_EN.finditer(text) for name in match.groups() if name}
    names |= {match.group(1) for match in _NAMED_ZH.finditer(text)}
    return frozenset(names - _NOT_PET_NAMES)


def loses_a_pet_named(text: str, names: frozenset[str]) -> bool:
    """Whether `text` tells the death or loss of a pet it names only by one of `names` ("团子走了快一个月了",
    "Biscuit passed away on Sunday")."""
    if not names or not may_lose_a_pet(text):
        return False
    english, chinese = (sorted(n for n in names if n.isascii() == ascii) for ascii in (True, False))
    found = english and re.search(
        rf"\b(?:{'|'.join(map(re.escape, english))})\b,? {_GONE_EN}\b|"
        rf"\b(?i:put|lost|buried|said goodbye to) (?:{'|'.join(map(re.escape, english))})\b(?!['’]s)",
        text,
    )
    return bool(found or chinese and re.search(rf"(?:{'|'.join(chinese)}){_WHEN_ZH}{_GONE_ZH}", text))
