"""Entity names for the knowledge graph's ENTITY nodes (`pcm.world.names.named_entities`)."""

from __future__ import annotations

import pytest

from pcm.world.names import entity_key, known_names, named_entities


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yeah, we walked Pixie to Fox Hollow today.", ["Pixie", "Fox Hollow"]),
        ("Thanks! Sometimes I just nap. Got it, ttyl! Kinda tired. Bye!", []),
        (
            'I finally read "Harry Potter and the Philosopher\'s Stone" last week.',
            ["Harry Potter and the Philosopher's Stone"],
        ),
        ("We watched Lord of the Rings with J.K. Rowling fans in NYC.", ["Lord of the Rings", "J.K. Rowling", "NYC"]),
        ("I was SO tired, JUST DOING IT anyway.", []),
        # dates and holidays, demonyms and kinship words are no names
        ("During Thanksgiving we flew to Italy with some European friends on Monday.", ["Italy"]),
        ("Dinner at Grandma's on Sundays, then the Christmas market. Aunt Sarah too.", ["Sarah"]),
    ],
)
def test_english_names_are_names_whole_and_never_sentence_openers(text, expected):
    assert named_entities(text) == expected


def test_a_known_name_counts_where_it_opens_a_sentence_and_a_possessive_is_the_same_entity():
    text = "Pixie's new bed came today. Max loves it too."
    assert named_entities(text) == []  # opening words: only names already met count there
    assert named_entities(text, known_names(["Pixie", "Max Power"])) == ["Pixie", "Max"]
    assert entity_key("Pixie's") == entity_key("pixie") == "pixie"


def test_chinese_names_titles_and_pet_names():
    names = named_entities("周末我跟李明去杭州西湖骑车了，晚上玩《原神》。我家金毛叫旺财。")
    assert {"李明", "杭州", "西湖", "原神", "旺财"} <= set(names)
    assert "周末" not in names and "金毛" not in names
    assert named_entities("我家兔子叫土豆，胆子特别小") == ["土豆"]  # after a pet, even a common word


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # listed names where jieba's guesses cut them (小红 + 书上, 海底 + 捞), not inside its words
        ("在小红书上刷到一家海底捞的新店", ["小红书", "海底捞"]),
        ("我住在北京东路附近", ["北京"]),
        # kinship and common words jieba tags as names or places are none
        ("我老公对花粉过敏，幼儿园又放假了，吃点新鲜的吧", []),
        # nicknames of surnames, not inside an idiom
        ("老周说小刘下周到，不用大张旗鼓", ["老周", "小刘"]),
        # a division after a place is its own name; an event after a place joins it
        ("搬到深圳南山区以后一直想去看巴黎奥运会", ["深圳", "南山区", "巴黎奥运会"]),
        ("周末去了趟大理，顺便在招行办了张卡", ["大理", "招行"]),  # 张 counts the card here
        # a prefecture and its county, each cut by jieba (信 + 阳光 + 山), are two places together
        ("老家是信阳光山的，过年回去", ["信阳", "光山"]),
        # a listed title with its sequel's number, not a listed name with a count
        ("周末带女儿去看了冰雪奇缘2，她跟着唱了一路", ["冰雪奇缘2"]),
        ("上周去了海底捞2次", ["海底捞"]),
    ],
)
def test_chinese_names_from_the_lexicons_and_not_from_jiebas_noisy_tags(text, expected):
    assert named_entities(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Jake called me last night about the trip.", ["Jake"]),
        ("Will you come? Hope so. Art is my thing.", []),
        ("Took the Toyota Corolla in for new brakes.", ["Toyota Corolla"]),
        ("Lord of the Rings is on tonight.", ["Lord of the Rings"]),
    ],
)
def test_a_first_name_that_is_no_common_word_counts_where_it_opens_a_sentence(text, expected):
    assert named_entities(text) == expected


def test_each_name_once_in_order_of_appearance_and_at_most_the_limit():
    text = "I met Alice and Bob. Then Alice and Bob met Carol, Dave and Erin in Paris."
    assert named_entities(text) == ["Alice", "Bob", "Carol", "Dave", "Erin", "Paris"]
    assert named_entities(text, limit=2) == ["Alice", "Bob"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a place or a rare first name opening a sentence; "Sale" and "Mobile" are left out of the place list
        ("Edinburgh, Scotland would be great. Kayla loved London.", ["Edinburgh", "Scotland", "Kayla", "London"]),
        ("Sale ends today. Mobile data is slow.", []),
        # a first name that owns something opens a sentence as a name; "Art's" may be "Art is"
        ("Max's vet appointment got moved. Art's awesome.", ["Max"]),
        # text typed without capitals: places (several words whole) and first names that keep their spelling
        ("booked flights to tokyo, the layover in new york is 6 hours", ["tokyo", "new york"]),
        ("kayla and emma said my buddy drew a map of the area", ["kayla", "emma"]),
        ("listening to taylor swift's new album, logan roy is terrifying", ["taylor swift", "logan roy"]),
        # listed organisations: opening a sentence, and in lower case unless an English word or after an article
        # a listed title in lower case right after watching or reading, not a watched thing that is none
        ("just finished breaking bad, now watching the kids", ["breaking bad"]),
        ("Netflix raised prices again. Heard Ed Sheeran is touring.", ["Netflix", "Ed Sheeran"]),
        # a listed title keeps its "The" where it opens a sentence; an article before another name does not
        ("The Last of Us Part II is on sale. The Wolves won again.", ["The Last of Us Part II", "Wolves"]),
        (
            "meeting jess at starbucks, then trader joe's. do i need a visa? i ate an apple",
            ["jess", "starbucks", "trader joe"],
        ),
    ],
)
def test_places_and_first_names_opening_a_sentence_or_typed_in_lower_case(text, expected):
    assert named_entities(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a pet or a child opening a clause before its time or adverb, a pet after someone's home and its animal
        ("馒头最近掉毛好严重，要不要换个猫粮啊", ["馒头"]),
        ("朵朵今天在幼儿园被老师表扬了", ["朵朵"]),
        ("小美说她在海底捞过生日", ["小美", "海底捞"]),  # 小 + a given name's character, cut apart by jieba
        ("我家橘猫馒头今天把绿萝啃秃了", ["馒头"]),
        ("老王说他家旺财昨天把沙发咬了个洞", ["老王", "旺财"]),
        # household words and adverbs are no pets (空调, 又胖), a pet cue alone names nothing (疫苗)
        ("我家空调今天又坏了，猫热得不行", []),
        ("你家猫又胖了一圈吧", []),
        ("疫苗今天打完了，狗狗有点蔫", []),
        # a brand before its thing (耐克 + 鞋), not a place before its product (普洱 + 茶)
        ("新买的耐克鞋被狗啃了", ["耐克"]),
        ("普洱茶怎么泡？", []),
    ],
)
def test_chinese_pets_and_children_by_where_they_stand_in_a_clause(text, expected):
    assert named_entities(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("昨晚刷完了漫长的季节，后劲太大了", ["漫长的季节"]),
        ("最近在追狂飙，这个角色演得太好了", ["狂飙"]),
        ("最近在看三体，第二部比第一部好看多了", ["三体"]),
        ("昨天去看了流浪地球2，特效真的震撼", ["流浪地球2"]),
        # watched things that are no titles: a count, a kind of work or feed, a verb, kin, no word of a work
        ("看了一部电影，演得一般", []),
        ("刷完了新出的韩剧，男主好帅", []),
        ("追完了最后一集，好舍不得", []),
        ("周末去看了爷爷奶奶", []),
        ("我们昨天去看了婚宴场地，气氛特别好", []),
        ("刚看完牙医，脸还肿着", []),
    ],
)
def test_chinese_titles_written_without_book_title_marks(text, expected):
    assert named_entities(text) == expected
