"""The table of life states that exclude each other (`pcm.life_states` reads it).

Each facet of a person's life lists its states in order of priority, each as a general English and
a general Chinese expression (not the words of any one scenario), the categories in which implicit
contradictions live: diet and food, habits and abstinence, family, pets, partner, work and
schooling, health, travel, housing. The first state of a facet whose expression matches wins ("I
quit smoking, haven't had a cigarette since" abstains).
"""

from __future__ import annotations

_NEG = r"(?:don'?t|do not|doesn'?t|never|no longer|can'?t|cannot|won'?t|haven'?t|not)"
_SHELLFISH = r"shrimp|prawns?|lobster|crab|oysters?|mussels|scallops|clams"

#: facet → ((state, English expression, Chinese expression), ...), in order of priority
#: (a state of None says the text asserts nothing on the facet: it masks the states after it)
FACETS: dict[str, tuple[tuple[str | None, str, str], ...]] = {
    "meat": (
        (
            "abstains",
            r"\b(?:vegetarian|vegan|plant[- ]based|pescatarian|meat[- ]free|meatless)\b|"
            rf"\b{_NEG} (?:eat|eating|ate|touch|touched) (?:any )?(?:meat|red meat|pork|beef|chicken)\b|"
            r"\b(?:gave up|quit|stopped eating|cut out) (?:red )?meat\b",
            r"吃素|素食|不吃肉|不碰肉|戒肉|不吃荤",
        ),
        (
            "consumes",
            r"(?<!veggie )(?<!vegan )(?<!tofu )(?<!plant-based )(?<!beyond )(?<!impossible )(?<!meatless )"
            r"\b(?:steaks?|ribeye|sirloin|bacon|pork|beef|brisket|(?:ham|cheese|beef)?burgers?|lamb|veal|sausages?|"
            r"pepperoni|salami|prosciutto|meatballs?|ribs|chicken wings|fried chicken|roast chicken|"
            r"pulled pork|hot ?dogs?|butcher|chorizo|turkey|duck|venison|jerky)\b",
            r"猪肉|牛肉|羊肉|红烧肉|排骨|烤肉|牛排|火腿|培根|烤鸭|鸡腿|肉串|涮肉|五花肉|鸡翅|肘子|腊肉|香肠",
        ),
    ),
    "alcohol": (
        (
            "abstains",
            rf"\b{_NEG} (?:drink|drinking)(?! (?:coffee|tea|soda|milk|juice|water|caffeine))\b|"
            r"\b(?:sober|teetotal(?:er|ler)?|alcohol[- ]free|don'?t touch alcohol)\b|"
            r"\b(?:quit|stopped|gave up) (?:drinking|alcohol|booze)\b",
            r"不喝酒|戒酒|滴酒不沾|不沾酒|酒精过敏",
        ),
        (
            "consumes",
            r"\b(?:beers?|wine|whiske?y|vodka|cocktails?|tequila|champagne|prosecco|bourbon|margaritas?|"
            r"sangria|mimosas?|pints?|hangover|hungover|tipsy|drunk|rosé|barolo|chianti|rioja|malbec|merlot|cabernet|pinot|"
            r"chardonnay|sauvignon|riesling|(?:glass|bottle)s? of (?:red|white))\b",
            r"喝酒|啤酒|红酒|白酒|干杯|喝醉|宿醉|鸡尾酒|威士忌|喝了(?:一|两|几)?(?:杯|瓶)酒",
        ),
    ),
    "coffee": (
        (
            "abstains",
            rf"\b{_NEG} (?:drink|drinking|have|touch) (?:any )?coffee\b|\b(?:quit|gave up|stopped drinking) coffee\b|"
            r"\bno coffee\b|\bcaffeine[- ]free\b|\bdecaf only\b",
            r"不喝咖啡|戒咖啡|戒了咖啡|咖啡因过敏",
        ),
        (
            "consumes",
            r"\b(?:espressos?|lattes?|cappuccinos?|americanos?|cold brew|flat whites?|macchiatos?|"
            r"(?:cups?|mugs?|pot|shots?) of coffee|(?:my|iced|black|morning|first|second|third) coffee)\b",
            r"咖啡|美式|拿铁|手冲|浓缩",
        ),
    ),
    "smoking": (
        (
            "abstains",
            rf"\b(?:quit|stopped|gave up|{_NEG}) smok(?:e|ing)\b|\bnon-?smoker\b|\bsmoke-free\b|"
            r"\bhaven'?t (?:had|touched|smoked) a (?:single )?(?:cigarette|smoke)\b",
            r"戒烟|不抽烟|不吸烟|从不抽烟|戒了烟",
        ),
        (
            "consumes",
            r"\b(?:smoke break|cigarettes?|cigs|a smoke|pack of (?:cigarettes|smokes)|vap(?:e|ing)|lit up|"
            r"smoking again|i smoke|(?:a |half a |two )?packs? a day)\b",
            r"抽烟|吸烟|一根烟|烟瘾|抽了(?:一|两|几)?(?:根|支)",
        ),
    ),
    "spicy": (
        (
            "abstains",
            rf"\b{_NEG} (?:eat|handle|stand|take) (?:any |much )?(?:spicy|spice|heat|chilli|chili)\b",
            r"不(?:能)?吃辣|受不了辣|一点辣都|怕辣|不碰辣",
        ),
        (
            "consumes",
            r"\b(?:extra|super|really|very)[- ]spicy\b|\bghost pepper\b|\bhot wings\b",
            r"特辣|麻辣|变态辣|重辣|辣锅",
        ),
    ),
    "pets": (
        (
            "none",
            rf"\b{_NEG} (?:have|had|own|owned) (?:any )?pets?\b|\bno pets\b|\bpet-free\b",
            r"没(?:有)?养(?:过)?(?:宠物|猫|狗)|不养(?:宠物|猫|狗)|从(?:来)?没养过",
        ),
        (
            "has",
            r"\b(?:my|our) (?:cats?|dogs?|pupp(?:y|ies)|kittens?|pups?|parrots?|parakeets?|hamsters?|rabbits?|"
            r"bunn(?:y|ies)|husk(?:y|ies)|labradors?|corgis?|beagles?|poodles?|retrievers?|terriers?)\b|"
            r"\bwalk(?:ing|ed)? (?:the|my|our|both) (?:dogs?|huskies|pups?)\b|"
            r"\badopted (?:a|an|two) (?:cats?|dogs?|pupp(?:y|ies)|kittens?|rescue)\b|"
            r"(?-i:\b[A-Z][a-z]+) the (?:cat|dog|puppy|kitten|pup|bunny|rabbit|hamster|parrot)\b",
            r"我家(?:的)?(?:猫|狗|橘猫|狗狗|猫咪|主子)|我的(?:猫|狗)|养了(?:一只|只|条|一条)?(?:猫|狗)|铲屎",
        ),
    ),
    "children": (
        (
            "none",
            rf"\b{_NEG} (?:have|want|planning on having|plan on having) (?:any )?(?:kids|children)\b|"
            r"\bno kids\b|\bchild-?free\b|\bnot planning (?:on|to have) (?:kids|children|any)\b",
            r"没(?:有)?孩子|不要孩子|丁克|不打算要孩子",
        ),
        (
            "has",
            r"\b(?:my|our) (?:son|daughter|kids|children|baby|toddler|newborn|twins)\b|\bbaby [A-Z][a-z]+\b|"
            r"\bpregnan(?:t|cy)\b|\b\w+[- ]week (?:scan|ultrasound)\b|\bultrasound\b|\b(?:maternity|paternity) leave\b|"
            r"\bdue date\b",
            r"我(?:的)?(?:儿子|女儿)|我家(?:孩子|宝宝|老大|老二)|怀孕|产检|坐月子|孕期",
        ),
    ),
    "partner": (
        (
            "single",
            r"\b(?:i'?m|i am) single\b|\bsingle (?:again|for)\b|\bbeen single\b|\bnot (?:dating|seeing) anyone\b|"
            r"\bbroke up\b|\bbreak-?up\b|\bsplit up with\b|\bgot divorced\b|\b(?:i'?m|i am) divorced\b|"
            r"\bcalled off (?:the|our) (?:engagement|wedding)\b",
            r"单身|分手|离婚|离了婚",
        ),
        (
            "partnered",
            r"\bmy (?:girlfriend|boyfriend|wife|husband|fianc[ée]e?|spouse)\b|"
            r"\b(?:girlfriend|boyfriend|fianc[ée]e?|wife|husband) and i\b|\bour (?:wedding|anniversary|engagement)\b|"
            r"\b(?:i'?m|i am|we'?re|we are) (?:married|engaged)\b|"
            r"\b(?:i'?m|i am|i've been) (?:dating|seeing (?:someone|somebody|a guy|a girl|a woman|a man))\b|"
            r"\bnot single any ?more\b",
            r"(?:我|跟|和)(?:的)?(?:老公|老婆|男朋友|女朋友|男友|女友|未婚夫|未婚妻|丈夫|妻子|爱人|对象)|结婚(?:纪念日|\S{1,2}周年)",
        ),
    ),
    "car": (
        (
            "none",
            rf"\b{_NEG} (?:own|have|drive) a car\b|\bno car\b|\bcar-?free\b|\bsold (?:my|our|the) car\b|"
            r"\bwithout a car\b",
            r"没(?:有)?车|不开车|把车卖了|卖了车|没买车",
        ),
        (
            "has",
            r"\bmy (?:car|truck|suv|jeep|subaru|toyota|honda|tesla|minivan|sedan)\b|\boil change\b|"
            r"\btook the (?:car|truck|subaru|jeep|toyota|honda|tesla|van)\b|\b(?:i|we) drive an? \w+|"
            r"\bparking (?:for )?my\b|\bdrove (?:my|to work)\b",
            r"我的车|我家车|开车(?:上班|去)|我开的是|洗车|停车位",
        ),
    ),
    "medication": (
        (
            "none",
            rf"\bnot on any (?:medication|meds|pills)\b|\b{_NEG} take any (?:medication|meds|pills)\b|"
            r"\bno (?:medication|meds)\b",
            r"没(?:有)?(?:在)?吃(?:任何)?药|不吃任何药",
        ),
        (
            "takes",
            r"\b(?:my|blood pressure|daily|prescription) (?:pills|meds|medication|prescription)\b|"
            r"\brefill (?:my|the) (?:prescription|pills|meds)\b|"
            r"\b(?:taking|take|on) (?:insulin|metformin|statins?|antidepressants?|sertraline|lexapro|zoloft|prozac|"
            r"adderall|an inhaler)\b",
            r"降压药|处方药|胰岛素|每天(?:都)?要吃药",
        ),
    ),
    "seafood": (
        # a shellfish allergy says nothing about fish: its list of shellfish is not eating them
        (None, r"\ballergic to (?:shellfish|shrimp|crab|lobster)\b|\bshellfish allergy\b", r"对虾过敏|贝类过敏"),
        (
            "abstains",
            r"\b(?:vegetarian|vegan|plant[- ]based)\b|\ballergic to (?:seafood|fish)\b|\b(?:seafood|fish) allergy\b|"
            rf"\b{_NEG} (?:eat|eating|touch) (?:any )?(?:meat or )?(?:fish|seafood)\b",
            r"吃素|素食|海鲜过敏|不吃海鲜|不吃鱼",
        ),
        (
            "consumes",
            r"\bpescatarian\b|(?<!vegan )(?<!vegetarian )(?<!veggie )(?<!plant-based )(?<!imitation )(?<!fake )"
            rf"\b(?:sushi|sashimi|{_SHELLFISH}|salmon|tuna|cod|"
            r"seafood|fish and chips|fish tacos|grilled fish|ceviche|poke bowl)\b"
            r"(?![- ](?:based|flavou?red|oil|sauce|restaurants?|places?|spots?|markets?))",
            r"(?<!素)(?:海鲜|寿司|刺身|三文鱼|吃鱼|小龙虾|螃蟹|大闸蟹|生蚝|烤鱼|酸菜鱼|水煮鱼)",
        ),
    ),
    # a shellfish allergy excludes shellfish, not fish: "allergic to shellfish" and "salmon for the omega-3s"
    "shellfish": (
        (
            "abstains",
            r"\ballergic to (?:shellfish|shrimp|crab|lobster)\b|\bshellfish allergy\b|"
            rf"\b{_NEG} (?:eat|eating|touch) (?:any )?shellfish\b",
            r"对虾过敏|海鲜过敏|不吃虾|贝类过敏",
        ),
        (
            "consumes",
            rf"(?<!vegan )(?<!imitation )(?<!fake )\b(?:{_SHELLFISH})\b(?![- ](?:based|flavou?red|oil|sauce))",
            r"(?<!素)(?:小龙虾|螃蟹|大闸蟹|生蚝|虾仁|扇贝|蛤蜊)",
        ),
    ),
    "siblings": (
        (
            "none",
            r"\b(?:i'?m|i am|being|as) an only child\b|\bno (?:brothers or sisters|siblings)\b|"
            rf"\b{_NEG} (?:have|had) (?:any )?(?:siblings|brothers or sisters)\b",
            r"独生子|独生女|独生子女|没有兄弟姐妹",
        ),
        (
            "has",
            r"\bmy (?:(?:big|little|older|younger|twin|kid) )?(?:brother|sister|siblings|bro|sis)\b(?!-in-law)",
            r"我(?:的)?(?:哥哥|姐姐|弟弟|妹妹|哥|姐|弟|妹)(?!夫|们)",
        ),
    ),
    "flying": (
        (
            "avoids",
            r"\b(?:afraid|scared|terrified) of flying\b|\bfear of flying\b|\bnever (?:been on a plane|flown)\b|"
            rf"\b{_NEG} (?:fly|get on a plane|board a plane)\b|\bno passport\b|"
            r"\bnever (?:been|left) (?:abroad|the country)\b",
            r"恐飞|怕坐飞机|从(?:来)?没坐过飞机|不坐飞机|没出过国|没有护照",
        ),
        (
            "flies",
            r"\b(?:i|we) (?:just )?(?:flew|landed in|landed at)\b|\bmy (?:flight|layover|boarding pass)\b|"
            r"\b(?:our|the) flight (?:to|from|home|back)\b|"
            r"\bjet ?lag(?:ged)?\b",
            r"坐飞机|航班|倒时差|飞到了?",
        ),
    ),
    "housing": (
        (
            "rents",
            r"\bmy (?:landlord|landlady|lease|rent)\b|\brenting (?:a|an)\b|"
            r"\b(?:i|we) (?:still )?rent (?:a|an|our|my|the) (?:flat|apartment|place|house|room|studio|condo)\b",
            r"房东|我租的房|房租|租房",
        ),
        (
            "owns",
            r"\b(?:my|our) mortgage\b|"
            r"\b(?:we|i) (?:just |finally )?bought (?:a|our|my) (?:house|home|flat|apartment|condo)\b|"
            r"\bhomeowners?\b|\bclosed on (?:the|our|my) (?:house|home)\b",
            r"房贷|买了房|我们买的房|自己的房子|交房",
        ),
    ),
    "dairy": (
        (
            "abstains",
            r"\blactose[- ]intolerant\b|\b(?:i'?m|i am|i've been|i went|went|gone) (?:fully |completely )?"
            r"(?:dairy[- ]free|vegan)\b|"
            rf"\b(?:{_NEG}|cut out|gave up|quit) (?:eat |have |drink |touch )?(?:any )?(?:dairy|milk|cheese)\b",
            r"乳糖不耐|不能喝牛奶|不喝牛奶|不吃奶制品|戒奶|吃素",
        ),
        (
            "consumes",
            r"\b(?:had|ate|eating|eat|drank|drinking|grabbed|ordered|devoured|split|shared|inhaled) "
            r"(?:an? |the |some |two |"
            r"(?:a )?(?:huge|big|giant|whole|double|large|scoops? of|slices? of|bowls? of|pints? of) ){0,3}"
            r"(?:milkshakes?|cheesecake|ice cream|mac (?:and|n) cheese|cheese ?(?:board|plate|fondue)|glass of milk|"
            r"whole milk|gelato|brie|camembert|mozzarella|cheddar|parmesan|latte)\b",
            r"喝了?(?:一杯|杯)?奶茶|吃了?(?:一个|个|两个)?冰淇淋|芝士蛋糕|奶酪|喝牛奶|喝了(?:一|两)?(?:杯|瓶|盒)牛奶|酸奶",
        ),
    ),
    "schooling": (
        (
            "postgraduate",
            r"\b(?:phd|ph\.d\.?|doctoral|master'?s|grad) (?:student|program|programme|thesis|dissertation|school)\b|"
            r"\bmy (?:thesis|dissertation|phd) (?:advisor|supervisor|committee|defen[cs]e)\b|\bgrad school\b",
            r"读研|读博|研究生|博士生|研一|研二|研三|博一|博二|博三|导师",
        ),
        (
            "university",
            r"\b(?:freshman|sophomore|junior|senior|first|second|third|final|last|1st|2nd|3rd|4th) year "
            r"(?:of|at|in) (?:uni|university|college)\b|\b(?:i'?m|i am) (?:an? )?(?:college|uni|university|"
            r"undergrad(?:uate)?) student\b|\b(?:my|our) (?:dorm|college roommate|uni lectures?|college classes)\b|"
            r"\bmajoring in\b|\b(?:my|changed my) major\b|\b(?:i'?m|i am) studying (?:\w+ ){1,3}at (?-i:[A-Z])",
            r"大一|大二|大三|大四|读大学|上大学|读本科|本科生|大学生|我的专业",
        ),
        (
            "high_school",
            r"\b(?:freshman|sophomore|junior|senior|first|final|last) year (?:of|in|at) high school\b|"
            r"\b(?:i'?m|i am) (?:a |still )?(?:in high school|high school (?:senior|junior|student))\b|"
            r"\bcollege applications\b|\bapplying to colleges\b",
            r"高三|高二|高一|高考|读高中|上高中|高中生",
        ),
        (
            "graduated",
            r"\b(?:since|after) (?:i )?graduat(?:ed|ing)\b|\b(?:i|we) (?:just |finally |recently )?graduated\b",
            r"毕业了|毕业后|已经毕业|毕业(?:一|两|三|几)年",
        ),
    ),
    "work": (
        (
            "retired",
            r"\b(?:i'?m|i am|been|since i|i) retired\b|\bsince (?:i )?retir(?:ed|ing)\b|\bin retirement\b",
            r"我退休|退休(?:了|后|在家|以后)",
        ),
        (
            "self_employed",
            r"\bfreelanc(?:e|er|ing)\b|\bself-employed\b|\b(?:started|run|running) my own (?:business|company)\b",
            r"自由职业|自己创业|全职做自媒体",
        ),
        (
            "employed",
            r"\bfirst day (?:back )?at (?:a|my|the|work)\b|\bhired (?:me )?as\b|\bmy (?:boss|coworkers?|shift)\b|"
            r"\bat work today\b|\bback at (?:a real )?(?:job|work)\b|\bi work (?:at|for|as)\b|"
            r"\b(?:i'?m|i am) (?:an?|the) (?:\w+ ){0,3}(?:at|for) (?-i:[A-Z])",
            r"入职|上班第一天|新工作|我在\S{1,12}?(?:工作|上班)|"
            r"我在\S{1,12}?(?:做|当)\S{0,6}?(?:工程师|经理|设计师|老师|教师|柜员|会计|医生|护士|开发|销售|运营|程序员|律师)",
        ),
    ),
}
