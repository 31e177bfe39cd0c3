"""The closed word classes `pcm.world.names_zh` reads Chinese names by: surnames, given-name characters,
titles, kinship and role words, pets, and the kinds of place, organisation and event a name is of."""

from __future__ import annotations

import re
from functools import lru_cache

#: the commonest surnames
SURNAMES = frozenset(
    "王李张刘陈杨赵黄周吴徐孙胡朱高林何郭马罗梁宋郑谢韩唐冯于董萧程曹袁邓许傅沈曾彭吕苏卢蒋蔡贾丁魏薛叶阎余潘杜戴夏"
    "钟汪田任姜范方石姚谭廖邹熊金陆郝孔白崔康毛邱秦江史顾侯邵孟龙万段雷钱汤尹黎易常武乔贺赖龚文庞樊兰殷施陶洪翟安"
    "颜倪严牛温芦季俞章鲁葛伍韦申尤毕聂丛焦向柳邢路岳齐沿梅莫庄辛管祝左涂谷祁时舒耿牟卜路詹关苗凌费纪靳盛童欧甄项"
    "曲成游阳裴席卫查屈鲍位覃霍翁隋植甘景薄单包司柏宁柯阮桂闵欧解强柴华车冉房边辜吉饶刁瞿戚丘古米池滕晋苑邬臧畅宫"
)
#: surnames that make no common word after 小, 老 or 大 (not 小马 "pony", 小程序, 小孙子, 大方)
NICKNAME_SURNAMES = "王李张刘陈杨赵周吴徐朱林何郭罗梁郑谢韩唐冯董曹袁邓许沈曾彭吕卢蒋蔡丁魏薛潘杜钟汪姚谭廖邹陆郝崔邱秦"
#: characters common in given names: a name jieba guesses from a surname holds one (李明, 张子豪; not 黄焖,
#: 汤底), and after 小, 老, 大 or 阿 one makes a nickname (小美, 大伟; not 小店, 小镇)
GIVEN_NAMES = frozenset(
    "美芳宝雨雅东静宇蕾凡楠薇茜红丽敏娟英华慧婷琳玲燕霞萍莉洁晶月雪梅兰艳杰明伟强军磊勇涛斌刚峰辉鹏龙飞亮健超波宁欣"
    "悦佳琪瑶怡彤萱涵妍晨阳浩轩博文俊凯珍彬秀娜倩颖婉蓉莹璐露霖昊哲鑫睿帆航毅胖"
    "子国建平志福德生家春立新晓小永海金林中成清光天玉秀桂兵长云庆昌荣祥忠武思振宏伦豪洋奇达仁义礼智信"
    "嘉泽泉淑惠贤君雯菲菁芬芳馨莎琴瑜琦璇瑞锦程逸然安康乐欢笑诗梦可一之心如若"
)
#: what a surname is called by at work or by the young (张老师, 王总, 孙阿姨, 周姐): the surname with it is a name
TITLES = (
    "老师|医生|大夫|经理|主任|教授|律师|师傅|阿姨|叔叔|老头|老太|老板|总监|总(?![是算共之结体部数计量])|"
    "姐(?![姐妹夫])|哥(?![哥们])|导(?![演航致游])"
)
#: kinship and role words jieba tags as names
KINSHIP = frozenset(
    "阿姨 叔叔 阿婆 阿公 老公 老婆 宝宝 宝贝 媳妇 老爸 老妈 爸爸 妈妈 哥哥 姐姐 弟弟 妹妹 爷爷 奶奶 外婆 "
    "外公 姥姥 姥爷 舅舅 舅妈 姑姑 姑父 婶婶 伯伯 嫂子 老板 老师 师傅 同学 同事 闺蜜 老乡 大叔 大爷 大妈 "
    "小孩 小伙 老人 大人 大家 老大 老二 老三 老幺 崽崽 小家伙 闺女 儿子 女儿 孙子 孙女 外孙 婆婆 公公 岳父 岳母 "
    "丈母娘 老丈人 小姑子 小叔子 大姑子 大舅子 姨妈 姨夫 小姨 表哥 表姐 表弟 表妹 堂哥 堂姐 胖子 室友".split()
)
#: surnames that are also measure words, and what comes before a measure word (办了张卡, 这位, 一份)
MEASURE_WORDS = "张位份条"
BEFORE_MEASURE_WORD = "了一二两三四五六七八九十几这那每第半哪"
#: a word ending in a role is no name (高中同学), unless it is a surname with a title (张老师)
ROLE_ENDINGS = ("同学", "同事", "朋友", "老师", "师傅")
#: a person's name after these is the name without them (和婷婷 → 婷婷)
LEADING_PARTICLES = "和跟与同给让被找约陪"
#: last characters of common nouns, never of a name jieba guesses from a surname (胡辣汤, 米粉, 夏令营)
NOUN_ENDINGS = frozenset("汤粉面饭菜肉鱼鸡茶酒店馆营机车卡包票证费税鞋衣帽药油糖水汁底犬")
#: animals a pet name follows ("兔子叫土豆", "我家猫花卷")
PET_KINDS = "|".join(
    "狗狗 猫咪 小狗 小猫 兔子 仓鼠 鹦鹉 乌龟 金毛 柯基 泰迪 柴犬 哈士奇 布偶 英短 美短 橘猫 边牧 拉布拉多 比熊 博美 "
    "萨摩耶 狗 猫".split()
)
#: what follows the subject of a clause: a time, an adverb of habit or 把 / 被 (年糕今天…, 欢欢又…, 可乐把…)
SUBJECT_FOLLOWERS = re.compile(
    r"今天|昨天|前天|昨晚|今早|今晚|最近|这几天|这两天|又|一直|终于|刚刚|刚|居然|竟然|每天|天天|总是|老是|已经|第一次|"
    r"现在|早上|晚上|半夜|把|被"
)
#: a text about an animal: "我家" before a name there is a pet's
ANIMAL_CUES = re.compile(r"猫|狗|喵|汪|铲屎|遛|兽医|宠物|疫苗|掉毛|驱虫|绝育|握手|咬|🐶|🐱|🐕|🐈|🐰|🐹")
#: the kinds of place or organisation a name joins (华西 + 医院, 湘雅 + 二医院), and of event (潍坊 + 风筝节)
KIND_AFTER_NAME = re.compile(
    r"(?:第?[一二三四五六七八九十]?(?:医院|中学|小学))|"
    r"(?:银行|超市|大学|学院|幼儿园|机场|公园|古城|古镇|广场|商场|酒店|景区|集团|公司|大道|公路|马拉松|附中|附小|"
    r"[东南西北]?站|塔|书展|车展|博览会|家政|木业|家居|物业)|"
    r"(?!(?:中秋|端午|国庆|劳动|情人|元宵|清明|重阳|七夕|圣诞|儿童|妇女|教师|父亲|母亲|春节))[\u4e00-\u9fff]{2}节"
)
#: the last character of a kind of place: a place jieba tags ending in one is a name a little more often
PLACE_ENDINGS = frozenset("路街巷道湾岛山湖江河桥港寺庙塔堤园镇村屯峰岭")
#: animals and breeds, never a name of their own (柯基, 熊猫)
ANIMALS = frozenset(PET_KINDS.split("|")) | frozenset("熊猫 狗子 猫猫 鸟 蚊子".split())
#: a kind alone is no name (古城, 古镇, 加油站)
KINDS = frozenset(
    "医院 中学 小学 银行 超市 大学 学院 幼儿园 机场 公园 古城 古镇 广场 商场 酒店 景区 集团 公司 大道 公路 加油站 驿站 "
    "菜市场 健身房 电影院 体育馆 图书馆 博物馆 派出所 火车站 高铁站 汽车站 地铁站".split()
)
#: where a lake or a street is, one character after its name (太湖边, 春熙路上): a name may cut it off
LOCATIVES = frozenset("边里上下旁畔前后内外口")
#: the end of an event's name: a place joins it (巴黎 + 奥运会)
EVENT_ENDS = ("会", "节", "赛", "杯", "展", "马拉松")
#: watching or listening: a title may follow with no 《》 (刷完了漫长的季节, 在追狂飙, 单曲循环晴天); the SERIES
#: verbs are said of series and songs, so one rare word after them counts; after 看 a title needs WORK_WORDS
WATCHING = re.compile(
    r"(?:(?P<series>刷完了?|刷了|在刷|[二三]刷了?|在追|追完了?|追了|重温了?|单曲循环)|看完了?|去看了?|看了|在看|看过)"
)
#: words said of a film, a series, a book or a song: after 看 the words up to a title's end are one
WORK_WORDS = re.compile(
    r"演|剧|片|电影|影院|结局|主角|角色|导演|特效|上映|票房|集|季|主题曲|歌|唱|专辑|小说|原著|作者|泪目|看哭"
)
#: where a bare title ends: punctuation, an emoji, a part or an episode (第二部), a particle, a comment on it
TITLE_ENDS = re.compile(
    r"[，。！？!?,.、；;：:\s~～…（(]|第[一二三四五六七八九十\d]+[部季集章本期]|这[本部首个集]|"
    r"的(?:结局|大结局|原著|主题曲|片尾曲|作者|导演|演员|剧情)|[里吗呢吧啊呀了真太]|简直|好看|感觉|后劲|特效|以后|之后|"
    r"[\u2600-\u27bf\U0001f000-\U0001faff]"
)
#: what a watched thing that is no title ends with: a kind of work or feed (新出的韩剧, 所有的剧, 朋友圈), a count
NOT_TITLE_END = re.compile(
    r"(?:剧|电影|片|动画|综艺|节目|视频|小说|书|歌|番|直播|朋友圈|新闻|比赛|[一两几][集部季个本首])$"
)
#: a part or an episode: the text is about a work (三体第一部)
WORK_PART = re.compile(r"第[一二三四五六七八九十\d]+[部季集]")
#: what a watched thing that is no title starts with: a number or measure, a pronoun, a demonstrative
NOT_TITLE_START = frozenset("一两几这那每个部本场集些点下会眼遍次回半整好多我你他她它咱自")
#: a sequel's number after a title (流浪地球2, 冰雪奇缘2), not a count or a date (海底捞2次, 三体3天)
SEQUEL_NUMBER = re.compile(r"[1-9](?![\dA-Za-z.年月日号天个次点块元岁人分秒周期集部季小%])")


@lru_cache(maxsize=4096)
def zipf(word: str) -> float:
    """The word's Zipf frequency in Chinese (`wordfreq`)."""
    from wordfreq import zipf_frequency

    return zipf_frequency(word, "zh")
