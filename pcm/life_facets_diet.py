"""Life states of diet and habits (`pcm.life_facets` joins them to its table): what a person eats,
drinks and smokes, each facet's states in order of priority as general English and Chinese expressions."""

from __future__ import annotations

#: words that negate the verb after them
NEGATION = r"(?:don'?t|do not|doesn'?t|never|no longer|can'?t|cannot|won'?t|haven'?t|not)"
_SHELLFISH = r"shrimp|prawns?|lobster|crab|oysters?|mussels|scallops|clams"

#: facet → ((state, English expression, Chinese expression), ...), as `pcm.life_facets.FACETS`
DIET_FACETS: dict[str, tuple[tuple[str | None, str, str], ...]] = {
    "meat": (
        (
            "abstains",
            r"\b(?:vegetarian|vegan|plant[- ]based|pescatarian|meat[- ]free|meatless)\b|"
            rf"\b{NEGATION} (?:eat|eating|ate|touch|touched) (?:any )?(?:meat|red meat|pork|beef|chicken)\b|"
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
            rf"\b{NEGATION} (?:drink|drinking)(?! (?:coffee|tea|soda|milk|juice|water|caffeine))\b|"
            r"\b(?:sober|teetotal(?:er|ler)?|alcohol[- ]free|don'?t touch alcohol)\b|"
            r"\b(?:quit|stopped|gave up) (?:drinking|alcohol|booze)\b|\bsobriety\b|\bAA meetings?\b|"
            r"\b(?:days|weeks|months|years) sober\b",
            r"不喝酒|戒酒|滴酒不沾|不沾酒|酒精过敏",
        ),
        (
            "consumes",
            r"(?<!non-alcoholic )(?<!alcohol-free )(?<!zero-alcohol )"
            r"\b(?:beers?|wine|whiske?y|vodka|cocktails?|tequila|champagne|prosecco|bourbon|margaritas?|"
            r"sangria|mimosas?|pints?|hangover|hungover|tipsy|drunk|rosé|barolo|chianti|rioja|malbec|merlot|cabernet|pinot|"
            r"chardonnay|sauvignon|riesling|(?:glass|bottle)s? of (?:red|white))\b|"
            r"\b(?:i|we) (?:still |do )?drink\b(?! (?:coffee|tea|water|"
            r"milk|juice|soda|caffeine|decaf|kombucha|smoothies))",
            r"喝酒|(?<!无醇)(?<!无酒精)啤酒|红酒|白酒|干杯|喝醉|宿醉|鸡尾酒|威士忌|喝了(?:一|两|几)?(?:杯|瓶)酒|喝多了|喝大了|小酌",
        ),
    ),
    "coffee": (
        (
            "abstains",
            rf"\b{NEGATION} (?:drink|drinking|have|touch) (?:any )?coffee\b|"
            r"\b(?:quit|gave up|stopped drinking) coffee\b|"
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
            rf"\b(?:quit|stopped|gave up|{NEGATION}) smok(?:e|ing)\b|\bnon-?smoker\b|\bsmoke-free\b|"
            r"\bhaven'?t (?:had|touched|smoked) a (?:single )?(?:cigarette|smoke)\b|\bnicotine-free\b|"
            r"\bquit cold turkey\b",
            r"戒烟|不抽烟|不吸烟|从不抽烟|戒了烟|(?:递烟|烟)\S{0,4}(?:摆手|不碰)",
        ),
        (
            "consumes",
            r"\b(?:smoke break|cigarettes?|cigs|a smoke|pack of (?:cigarettes|smokes)|vap(?:e|ing)|lit up|"
            r"smoking again|i smoke|(?:a |half a |two )?packs? a day|light(?:ed|"
            r"ing)? up (?:outside|a cig|a smoke|again)|elf ?bar|juul)\b",
            r"抽烟|吸烟|一根烟|烟瘾|抽了(?:一|两|几)?(?:根|支)|一根接一根|一(?:天|包)\S{0,4}烟",
        ),
    ),
    "spicy": (
        (
            "abstains",
            rf"\b{NEGATION} (?:eat|handle|stand|take) (?:any |much )?(?:spicy|spice|heat|chilli|chili)\b",
            r"不(?:能)?吃辣|受不了辣|一点辣都|怕辣|不碰辣",
        ),
        (
            "consumes",
            r"\b(?:extra|super|really|very)[- ]spicy\b|\bghost pepper\b|\bhot wings\b",
            r"特辣|麻辣|变态辣|重辣|辣锅",
        ),
    ),
    "seafood": (
        # a shellfish allergy says nothing about fish: its list of shellfish is not eating them
        (None, r"\ballergic to (?:shellfish|shrimp|crab|lobster)\b|\bshellfish allergy\b", r"对虾过敏|贝类过敏"),
        (
            "abstains",
            r"\b(?:vegetarian|vegan|plant[- ]based)\b|\ballergic to (?:seafood|fish)\b|\b(?:seafood|fish) allergy\b|"
            rf"\b{NEGATION} (?:eat|eating|touch) (?:any )?(?:meat or )?(?:fish|seafood)\b",
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
            rf"\b{NEGATION} (?:eat|eating|touch) (?:any )?shellfish\b",
            r"对虾过敏|海鲜过敏|不吃虾|贝类过敏",
        ),
        (
            "consumes",
            rf"(?<!vegan )(?<!imitation )(?<!fake )\b(?:{_SHELLFISH})\b(?![- ](?:based|flavou?red|oil|sauce))",
            r"(?<!素)(?:小龙虾|螃蟹|大闸蟹|生蚝|虾仁|扇贝|蛤蜊)",
        ),
    ),
    "dairy": (
        (
            "abstains",
            r"\blactose[- ]intolerant\b|\b(?:i'?m|i am|i've been|i went|went|gone) (?:fully |completely )?"
            r"(?:dairy[- ]free|vegan)\b|"
            rf"\b(?:{NEGATION}|cut out|gave up|quit) (?:eat |have |drink |touch )?(?:any )?(?:dairy|milk|cheese)\b",
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
    # an allergy excludes eating it: "allergic to peanuts" / "peanut butter straight from the jar"
    "peanuts": (
        # a substitute ("sunflower seed butter", 葵花籽) or a peanut-free label says nothing either way
        (None, r"\b(?:sunflower|seed|soy) butter\b|\b(?:peanut|nut)-free\b", r"葵花籽|无花生"),
        (
            "abstains",
            r"\ballergic to (?:peanuts|nuts|tree nuts)\b|\b(?:peanut|nut|tree nut) allergy\b",
            r"花生过敏|坚果过敏|对花生",
        ),
        (
            "consumes",
            r"(?<!no )\b(?:peanut butter|peanut sauce|satay|pb ?& ?j|salted peanuts|snickers|reese'?s)\b",
            r"花生酱|花生米|宫保鸡丁|花生糖",
        ),
    ),
    # coeliac disease or a gluten-free diet excludes bread, pasta and the like
    "gluten": (
        (
            "abstains",
            r"\b(?:celiac|coeliac|gluten intoleran(?:t|ce))\b|\b(?:no|avoid|can'?t (?:eat|have)) gluten\b|"
            r"\b(?:i'?m|i am|i eat|i'?ve (?:gone|been)|went|gone) (?:fully |completely |strictly )?gluten[- ]free\b",
            r"乳糜泻|麸质过敏|不能吃麸质",
        ),
        # a gluten-free product ("gluten-free spaghetti") says nothing of the speaker's diet either way
        (None, r"\bgluten[- ]free\b", r"无麸质"),
        (
            "consumes",
            r"\b(?:sourdough|bagels?|croissants?|baguettes?|garlic bread|spaghetti|lasagna|tagliatelle|ramen)\b",
            r"面包|馒头|包子|饺子|拉面|面条",
        ),
    ),
    # a ketogenic or low-carb diet excludes bread, pasta, rice and sugar
    "carbs": (
        (
            "abstains",
            r"\b(?:keto|low[- ]carb|no carbs|zero carbs|cut out carbs)\b",
            r"生酮|不吃碳水|戒碳水|断碳水",
        ),
        (
            "consumes",
            r"\b(?:risotto|pasta|garlic bread|pancakes|donuts?|doughnuts?|fries|a bowl of rice|sourdough|bagels?)\b",
            r"面条|馒头|蛋糕|奶茶",
        ),
    ),
}
