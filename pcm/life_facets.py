"""The table of life states that exclude each other (`pcm.life_states` reads it).

Each facet of a person's life lists its states in order of priority, each as a general English and
a general Chinese expression (not the words of any one scenario), the categories in which implicit
contradictions live: diet and food, habits and abstinence, family, pets, partner, work and
schooling, health, travel, housing. The first state of a facet whose expression matches wins ("I
quit smoking, haven't had a cigarette since" abstains).
"""

from __future__ import annotations

from pcm.life_facets_diet import DIET_FACETS, NEGATION
from pcm.life_facets_pets import PET_FACETS

#: words that make a medication a standing one ("any regular medication")
_REGULAR = r"(?:regular|daily|prescription|long-term|ongoing)"
#: medicines taken every day for a standing condition (not a short course: an antibiotic tells nothing)
_DRUGS = (
    r"levothyroxine|synthroid|lisinopril|amlodipine|atorvastatin|simvastatin|rosuvastatin|lipitor|metoprolol|"
    r"losartan|hydrochlorothiazide|omeprazole|pantoprazole|warfarin|eliquis|xarelto|levetiracetam|lamotrigine|"
    r"lithium|escitalopram|citalopram|fluoxetine|bupropion|wellbutrin|venlafaxine|ritalin|vyvanse|"
    r"thyroid (?:meds|medication|pills)|blood thinners?|beta[- ]blockers?|birth control(?: pills?)?|insulin(?: pens?)?|"
    r"metformin|statins?|sertraline|lexapro|zoloft|prozac|adderall|inhaler"
)
_DRUGS_ZH = r"优甲乐|左甲状腺素|二甲双胍|他汀|阿托伐他汀|降糖药|抗抑郁药|甲状腺(?:的)?药|华法林|避孕药"

#: cars by model, as people name the one they drive ("Sold the Golf", "my Civic")
_CARS = (
    r"car|truck|suv|jeep|subaru|toyota|honda|tesla|minivan|sedan|golf|civic|corolla|camry|prius|accord|jetta|"
    r"polo|fiesta|outback|forester|cr-v|rav4|f-150|wrangler|mustang|miata|model [3sxy]"
)
#: places abroad for a speaker of English (countries and famous cities where English is not the language)
_ABROAD = (
    r"japan|tokyo|kyoto|osaka|korea|seoul|china|beijing|shanghai|thailand|bangkok|vietnam|bali|indonesia|"
    r"singapore|india|france|paris|italy|rome|florence|venice|milan|spain|barcelona|madrid|portugal|lisbon|"
    r"germany|berlin|munich|greece|athens|netherlands|amsterdam|iceland|mexico|cancun|peru|brazil|argentina|"
    r"morocco|egypt|turkey|istanbul|prague|vienna|switzerland|europe"
)
#: places abroad for a speaker of Chinese
_ABROAD_ZH = (
    r"日本|东京|大阪|京都|北海道|韩国|首尔|泰国|曼谷|清迈|普吉岛|新加坡|马来西亚|越南|巴厘岛|欧洲|法国|巴黎|意大利|罗马|"
    r"英国|伦敦|美国|纽约|加拿大|澳大利亚|澳洲|悉尼|新西兰|德国|西班牙|瑞士|土耳其|迪拜|埃及|冰岛"
)
#: facet → ((state, English expression, Chinese expression), ...), in order of priority
#: (a state of None says the text asserts nothing on the facet: it masks the states after it)
FACETS: dict[str, tuple[tuple[str | None, str, str], ...]] = {
    **DIET_FACETS,
    **PET_FACETS,
    "children": (
        (
            "none",
            rf"\b{NEGATION} (?:have|want|planning on having|plan on having) (?:any )?(?:kids|children)\b|"
            r"\bno kids\b|\bchild-?free\b|\bnot planning (?:on|to have) (?:kids|children|any)\b|"
            r"\b(?:kids|children) (?:aren'?t|are not|were never|are never) (?:for|in the cards for) (?:us|me)\b|"
            r"\bdecided (?:against|not to have) (?:having )?(?:kids|children)\b",
            r"没(?:有)?孩子|没(?:有)?娃|不要孩子|丁克|不打算要孩子|不(?:想|打算)生(?:孩子|小孩)",
        ),
        (
            "has",
            r"\b(?:my|our) (?:son|daughter|kids|children|baby|toddler|newborn|twins)\b|\bbaby (?-i:[A-Z][a-z]+)\b|"
            r"\bpregnan(?:t|cy)\b|\b\w+[- ]week (?:scan|ultrasound)\b|\bultrasound\b|\b(?:maternity|paternity) leave\b|"
            r"\bdue date\b|\b(?:my|our) (?:wife|partner|girlfriend|fianc[ée]e?) (?:is|'s|just found out she'?s) "
            r"(?:\w+ ){0,3}pregnant\b|\bwe'?re (?:expecting|having a baby)\b|\bbaby on the way\b|"
            r"\b(?:i|we) have (?:a |an |one |two |three |four |\d )?(?:little |young |teenage |grown )?"
            r"(?:kids?|children|sons?|daughters?|twins)\b|\b(?:my )?kid'?s (?:school|homework|teacher|science fair|"
            r"soccer|recital|birthday|daycare)\b|\bPTA\b|\bparent-teacher\b|\bschool pick-?up\b",
            r"我(?:的)?(?:儿子|女儿)|我家(?:孩子|宝宝|老大|老二)|(?:老婆|媳妇|爱人|妻子)?怀孕|产检|坐月子|孕期|"
            r"我们(?:要|快)有(?:宝宝|孩子)了|家长(?:会|群)|接(?:娃|孩子)|送(?:娃|孩子)上学|辅导作业|我家娃|我娃",
        ),
    ),
    # trying for a child and expecting one exclude each other ("trying for a baby for a year" / "15 weeks along")
    "pregnancy": (
        (
            "expecting",
            r"\bpregnan(?:t|cy)\b|\b(?:first|second|third) trimester\b|\bmorning sickness\b|"
            r"\b\d+ weeks (?:pregnant|along)\b|\b(?:anatomy|dating|\d+[- ]week) scan\b|\bdue date\b|"
            r"\bwe'?re (?:expecting|having a baby)\b|\bbaby on the way\b",
            r"怀孕|孕期|孕早期|孕中期|孕晚期|孕吐|产检|预产期|怀了",
        ),
        (
            "trying",
            r"\btrying (?:for a baby|for a (?:kid|child)|to (?:get pregnant|conceive|have a baby))\b|\bTTC\b|"
            r"\bfertility (?:clinic|treatment|specialist)\b|\bIVF\b",
            r"备孕|试管",
        ),
    ),
    "partner": (
        (
            "single",
            r"\b(?:i'?m|i am) single\b|\bsingle (?:again|for)\b|\bbeen single\b|\bnot (?:dating|seeing) anyone\b|"
            r"\bbroke up\b|\bbreak-?up\b|\bsplit up with\b|\bgot divorced\b|\b(?:i'?m|i am) divorced\b|"
            r"\bcalled off (?:the|our) (?:engagement|wedding)\b|"
            r"\b(?:on|deleted|swip(?:ed|ing)(?: through| on)?|downloaded|"
            r"back on) (?:hinge|bumble|tinder|the dating apps)\b|"
            r"\bfirst date (?:in|since)\b",
            r"单身|分手|离婚|离了婚|没(?:有)?对象|相亲|催婚|脱单",
        ),
        (
            "partnered",
            r"\bmy (?:girlfriend|boyfriend|wife|husband|fianc[ée]e?|spouse)\b|"
            r"\b(?:girlfriend|boyfriend|fianc[ée]e?|wife|husband) and i\b|\bour (?:wedding|anniversary|engagement)\b|"
            r"\b(?:i'?m|i am|we'?re|we are) (?:married|engaged)\b|"
            r"\b(?:i'?m|i am|i've been) (?:dating|seeing (?:someone|somebody|a guy|a girl|a woman|a man))\b|"
            r"\bnot single any ?more\b|\b(?:my|our) in-laws\b|^\W*in-laws\b",
            r"(?:我|跟|和)(?:的)?(?:老公|老婆|男朋友|女朋友|男友|女友|未婚夫|未婚妻|丈夫|妻子|爱人|对象)|结婚(?:纪念日|\S{1,2}周年)|"
            r"^\W*(?:老公|老婆|媳妇)|领证|已婚",
        ),
    ),
    "car": (
        (
            "none",
            rf"\b{NEGATION} (?:own|have|drive) a car\b|\bno car\b|\bcar-?free\b|"
            rf"\bsold (?:my|our|the) (?:old )?(?:{_CARS})\b|\bwithout a car\b|"
            r"\bnever got (?:my|a) (?:driver'?s )?licen[cs]e\b|"
            rf"\b{NEGATION} (?:have|hold) a driver'?s licen[cs]e\b|\bno driver'?s licen[cs]e\b",
            r"没(?:有)?车|不开车|把车卖了|卖了车|没买车|不会开车|没(?:有)?驾照",
        ),
        (
            "has",
            rf"\bmy (?:{_CARS})\b|\boil change\b|"
            r"\btook the (?:car|truck|subaru|jeep|toyota|honda|tesla|van)\b|\b(?:i|we) drive an? \w+|"
            r"\bparking (?:for )?my\b|\bdrove (?:my|to work)\b|"
            r"\b(?:i|we) (?:have|own|got) an? (?:\w+ ){0,3}?(?:car|"
            r"truck|suv|minivan|sedan|subaru|toyota|honda|tesla)\b|"
            r"\b(?:i|we) drive (?:to|into|everywhere|every)\b",
            r"我的车|我家车|开车(?:上班|上下班|去)|我开的是|洗车|停车位|我(?:有|买了)(?:一)?辆|给车换",
        ),
    ),
    "medication": (
        (
            "none",
            rf"\bnot on any (?:{_REGULAR} )?(?:medications?|meds|pills)\b|\b(?:zero|no) {_REGULAR} (?:pills|meds)\b|"
            rf"\b{NEGATION} (?:take|need|use) any (?:{_REGULAR} )?(?:medications?|meds|pills)\b|"
            rf"\bno (?:{_REGULAR} )?(?:medications?|meds)\b",
            r"没(?:有)?(?:在)?吃(?:任何)?药|不吃任何药|不用(?:长期)?吃药|没(?:有)?(?:什么)?(?:需要)?(?:长期|规律)?(?:服用|吃)的药",
        ),
        (
            "takes",
            r"\b(?:my|blood pressure|daily|prescription) (?:pills|meds|medication|prescription)\b|"
            r"\brefill (?:my|the) (?:prescription|pills|meds)\b|"
            r"\b(?:taking|take|on) (?:insulin|metformin|statins?|antidepressants?|sertraline|lexapro|zoloft|prozac|"
            r"adderall|an inhaler)\b|"
            rf"\b(?:my|taking|take|on|started|prescribed) (?:{_DRUGS})\b|\bon the pill\b",
            rf"降压药|处方药|胰岛素|每天(?:都)?要吃药|长期(?:服药|吃药)|(?:去医院|挂号)拿药|{_DRUGS_ZH}",
        ),
    ),
    "siblings": (
        (
            "none",
            r"\b(?:i'?m|i am|being|as) an only child\b|\bno (?:brothers or sisters|siblings)\b|"
            rf"\b{NEGATION} (?:have|had) (?:any )?(?:siblings|brothers or sisters)\b",
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
            rf"\b{NEGATION} (?:fly|get on a plane|board a plane)\b|\bno passport\b|"
            r"\bnever (?:been|left) (?:abroad|the country)\b|\bflight phobia\b|\bphobia of flying\b|"
            r"\brefuses? to (?:get on|board) a plane\b",
            r"恐飞|怕坐飞机|从(?:来)?没坐过飞机|不坐飞机|不敢坐飞机|没出过国|没有护照",
        ),
        (
            "flies",
            r"\b(?:i|we) (?:just )?(?:flew|landed in|landed at)\b|\bmy (?:flight|layover|boarding pass)\b|"
            r"\b(?:our|the) flight (?:to|from|home|back)\b|"
            r"\bjet ?lag(?:ged)?\b|\b(?:i|we) fly (?:for work|to|out|home|back|a lot|every|often)\b|\bred-?eyes?\b",
            r"坐飞机|航班|倒时差|飞到了?",
        ),
    ),
    # travel abroad: "never left the country" against a trip to a place abroad (for speakers of English, a
    # non-English-speaking country or its famous cities; for speakers of Chinese, anywhere outside China)
    "abroad": (
        (
            "never",
            r"\bnever (?:been|travel(?:l)?ed|gone) (?:abroad|overseas|out of the country|outside (?:the|my) country)\b|"
            rf"\bnever (?:left|been out of) the country\b|\b{NEGATION} (?:even )?(?:have|own) a passport\b|"
            r"\bno passport\b",
            r"没出过国|没出国过|从(?:来)?没出过国|没(?:有)?(?:办过)?护照|护照都没办过",
        ),
        (
            "travelled",
            rf"\b(?:got|came|flew|just|am|i'?m) back (?:home )?from (?:\w+ ){{0,4}}?(?:{_ABROAD})\b|"
            rf"\b(?:my|our) (?:trip|vacation|holiday|honeymoon|week|weekend) (?:to|in) (?:{_ABROAD})\b|"
            r"\b(?:went|travel(?:l)?ed|travel|studied|stud(?:y|ying)) (?:abroad|overseas)\b|\bpassport stamps?\b|"
            r"\binternational flight\b|"
            rf"\b(?:came|got|flew) home from (?:\w+ ){{0,3}}?(?:{_ABROAD})\b|"
            rf"\b(?:currently|i'?m (?:now |currently )?|we'?re (?:now |"
            rf"currently )?|i am|we are) (?:in|visiting) (?:{_ABROAD})\b",
            rf"(?:刚|才)?从(?:{_ABROAD_ZH})回来|去了(?:一)?趟(?:{_ABROAD_ZH})|在(?:{_ABROAD_ZH})(?:玩|旅游|旅行|度假|逛)|"
            r"出国(?:玩|旅游|旅行|出差|读书)|第一次出国|"
            rf"(?:我|人)(?:现在|正)?在(?:{_ABROAD_ZH})",
        ),
    ),
    # owning a device of one maker: "no Apple devices at all" against "my new MacBook"
    "apple_devices": (
        (
            "none",
            rf"\bno (?:apple (?:devices?|products?|stuff)|macs?|iphones?)\b|"
            rf"\b{NEGATION} (?:own|have|use) (?:any |an? )?(?:apple (?:devices?|products?)|mac|macbook|iphone)s?\b|"
            r"\bnever (?:owned|used|had) (?:an? )?(?:apple|mac|macbook|iphone)\b",
            r"没有(?:任何)?苹果(?:设备|产品|的东西)|不用苹果|从(?:来)?没用过(?:苹果|iPhone|Mac)",
        ),
        (
            "has",
            r"\bmy (?:new )?(?:macbook(?: air| pro)?|mac|imac|mac mini|iphone|ipad|apple watch)\b|"
            r"\bm[1-4] (?:mac|macbook|chip|pro|air|max)\b|\b(?:i|"
            r"we) (?:use|have|own) an? (?:macbook|mac|iphone|ipad)\b|"
            r"\bmy apple watch\b|^\W*apple watch\b",
            r"苹果(?:笔记本|电脑|手机)|(?:我的|新买的|刚买的|我那台|我用的是)(?:Mac|MacBook|iPhone|iPad)|iCloud",
        ),
    ),
    "debt": (
        (
            "none",
            r"\bdebt-?free\b|\bno debt\b|\bnever financed\b|"
            r"\b(?:paid off|cleared) (?:the last of )?(?:my|our|"
            r"the) (?:last )?(?:\w+ )?(?:loans?|debts?|mortgage|credit cards?)\b|"
            rf"\b{NEGATION} owe (?:anyone|anybody|a cent|a penny|anything)\b",
            r"无债|(?:房贷|车贷|贷款|欠款|信用卡)\S{0,2}还清|一分钱都不欠|不欠(?:任何人)?(?:一分)?钱",
        ),
        (
            "has",
            r"\bstudent loans?\b|\bcredit card debt\b|\bin debt\b|\b(?:loan|installment|afterpay|klarna) payments?\b|"
            r"\bafterpay\b|\bowe (?:my|the|\$)",
            r"欠了|信用卡欠|房贷|车贷|花呗|借呗|还贷|负债",
        ),
    ),
    # night and day shifts exclude each other; a text telling both ("from nights to days") reads as nights
    "shift": (
        (
            "nights",
            r"\b(?:night|overnight|graveyard) shifts?\b|\bwork(?:ing)? nights\b|\bon nights\b",
            r"夜班",
        ),
        (
            "days",
            r"\bday shifts?\b|\bday rotation\b",
            r"白班",
        ),
    ),
    "housing": (
        (
            "rents",
            r"\bmy (?:landlord|landlady|lease|rent)\b|\brenting (?:a|an)\b|"
            r"\b(?:i|we) (?:still )?rent (?:a|an|our|my|the) (?:\S+ )?(?:flat|"
            r"apartment|place|house|room|studio|condo)\b|"
            r"\b(?:i|we) rent\b(?! out)|\b(?:i'?m|i am|we'?re|"
            r"we are) (?:a )?renters?\b|\blease (?:renewal|is up|ends|expires)\b|"
            r"\b(?:my|our) (?:new )?lease\b|\bhalf of (?:the )?rent\b|\brent is due\b",
            r"房东|我租的房|房租|租房|续租|租约|合租",
        ),
        (
            "owns",
            r"\b(?:my|our) mortgage\b|"
            r"\b(?:we|i) (?:just |finally )?bought (?:a|our|my) (?:house|home|flat|apartment|condo)\b|"
            r"\bhomeowners?\b|\bclosed on (?:the|our|my) (?:house|"
            r"home)\b|\bproperty tax(?:es)?\b|\bhoa (?:fees|dues)\b|"
            r"\b(?:i|we) own (?:a|an|our|my|the) (?:\w+ )?(?:house|home|condo|flat|apartment|place|townhouse)\b",
            r"房贷|买了房|我们买的房|自己的房子|交房|业主群|物业费|房产证",
        ),
    ),
    "schooling": (
        (
            "postgraduate",
            r"\b(?:phd|ph\.d\.?|doctoral|master'?s|grad) (?:student|program|programme|thesis|dissertation|school)\b|"
            r"\bmy (?:thesis|dissertation|phd) (?:advisor|supervisor|committee|defen[cs]e)\b|(?<!no )\bgrad school\b|"
            r"\b(?:doing|in|finishing|starting|into) (?:a|my|the) (?:phd|ph\.d\.?|doctorate|master'?s|mba)\b|"
            r"\bdefending my (?:dissertation|thesis)\b|\b(?:year|semester) of my (?:phd|master'?s|mba)\b",
            r"读研|读博|研究生|博士生|研一|研二|研三|博一|博二|博三|导师|博士(?:第|在读)|读MBA|在职读",
        ),
        (
            "university",
            r"\b(?:freshman|sophomore|junior|senior|first|second|third|final|last|1st|2nd|3rd|4th) year "
            r"(?:of|at|in) (?:uni|university|college)\b|\b(?:i'?m|i am) (?:an? )?(?:college|uni|university|"
            r"undergrad(?:uate)?) student\b|\b(?:my|our) (?:dorm|college roommate|uni lectures?|college classes)\b|"
            r"\bmajoring in\b|\b(?:my|changed my) major\b|\b(?:i'?m|i am) studying (?:\w+ ){1,3}at (?-i:[A-Z])|"
            r"\b(?:i'?m|i am) (?:in|at) (?:college|uni|university)\b|\bdining hall\b|\bmidterms?\b|"
            r"\bdoing (?:a|an|my) (?:\w+ )?(?:degree|bachelor'?s)\b",
            r"大一|大二|大三|大四|读大学|上大学|读本科|本科生|大学生|我的专业",
        ),
        (
            "high_school",
            r"\b(?:freshman|sophomore|junior|senior|first|final|last) year (?:of|in|at) high school\b|"
            r"\b(?:i'?m|i am) (?:a |still )?(?:in high school|high school (?:senior|junior|student))\b|"
            r"\bcollege applications\b|\bapplying to colleges\b|\b(?:9th|10th|11th|12th|ninth|tenth|eleventh|twelfth) "
            r"grade\b|\bhomeroom\b|\bprom\b|\bdetention\b|\bAP (?:chem|bio|calc|physics|history|english|lit)\w*\b|"
            r"\bour high school\b",
            r"高三|高二|高一|高考|读高中|上高中|高中生|月考|晚自习",
        ),
        (
            "graduated",
            r"\b(?:since|after) (?:i )?graduat(?:ed|ing)\b|\b(?:i|we) (?:just |finally |recently )?graduated\b|"
            r"^\W*(?:finally |just )?graduated\b|\bout of (?:college|"
            r"school|uni) (?:for )?(?:\w+ )?(?:years?|months?)\b|"
            r"\bmy diploma\b|\bcommencement\b|\b(?:finished|done with) (?:school|college|uni|my degree)\b",
            r"毕业了|毕业后|已经毕业|毕业(?:一|两|三|几)年",
        ),
    ),
    "work": (
        (
            "retired",
            r"\b(?:i'?m|i am|been|since i|i) retired\b|\bsince (?:i )?retir(?:ed|ing)\b|\bin retirement\b|"
            r"^\W*retired (?:last|this|in|after|from|early|\d)|\b(?:drawing|"
            r"collecting|on) (?:social security|(?:my )?pension)\b",
            r"我退休|退休(?:了|后|在家|以后)|退的休|退休金|养老金|老年大学",
        ),
        (
            "self_employed",
            r"\bfreelanc(?:e|er|ing)\b|\bself-employed\b|\b(?:started|run|running|own) my own \w+\b|\bmy own boss\b",
            r"自由职业|自己创业|全职做自媒体|自己开了(?:一)?(?:家|个)|自己当老板|个体户",
        ),
        (
            "unemployed",
            r"(?<!since )(?<!after )\b(?:got|was|been|just got|i was|i got|i've been) (?:laid off|let go|fired)\b|"
            r"^\W*(?:got )?laid off\b|\bbetween jobs\b|\bout of work\b|\bunemployed\b|"
            r"(?<!since i )(?<!after i )\blost my job\b|\bon unemployment\b",
            r"被裁(?:员)?|失业|待业|还没找到(?:下家|工作)",
        ),
        (
            "employed",
            r"\bfirst day (?:back )?at (?:a|my|the|work)\b|\bhired (?:me )?as\b|\bmy (?:boss|coworkers?|shift)\b|"
            r"\bat work today\b|\bback at (?:a real )?(?:job|work)\b|\bi work (?:at|for|as)\b|"
            r"\b(?:i'?m|i am) (?:an?|the) (?:\w+ ){0,3}(?:at|for) (?-i:[A-Z])|\b(?:i'?m|i am) employed\b|"
            r"\bmy (?:manager|team lead|paycheck|pto|performance review)\b",
            r"入职|上班第一天|新工作|我在\S{1,12}?(?:工作|上班)|打工人|我(?:们)?老板|我司|"
            r"我在\S{1,12}?(?:做|当)\S{0,6}?(?:工程师|经理|设计师|老师|教师|柜员|会计|医生|护士|开发|销售|运营|程序员|律师)",
        ),
    ),
}
