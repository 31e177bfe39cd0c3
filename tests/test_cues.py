"""Cue families that the offline router counts (pcm.cues), in English and Chinese."""

import pytest

from pcm.cues import FAMILIES, cue_counts, tells_onset
from pcm.speech_acts import asks_only, ends_asking, is_request


@pytest.mark.parametrize(
    "text, family",
    [
        ("I no longer work at Google.", "change"),
        ("We moved to Lisbon last spring.", "change"),
        ("These days I write everything in Rust.", "change"),
        ("First week at Microsoft is going great.", "change"),
        ("I also started learning Korean.", "additive"),
        ("Thinking about a trip to Seoul next month.", "additive"),
        ("Rehearsal ran late again tonight.", "routine"),
        ("I only drink tea.", "exclusive"),
        ("I don't eat meat.", "negation"),
        ("我已经搬到广州了。", "change"),
        ("我从华为离职了，现在在小米。", "change"),
        ("另外我最近也开始学吉他。", "additive"),
        ("今天又加班到九点。", "routine"),
        ("我只喝绿茶。", "exclusive"),
        ("我不喝咖啡。", "negation"),
    ],
)
def test_each_family_is_found(text, family):
    assert cue_counts(text)[family] >= 1


def test_counts_every_family_and_nothing_in_plain_text():
    counts = cue_counts("The lake was calm and the ducks were sleeping.")
    assert set(counts) == set(FAMILIES) and sum(counts.values()) == 0


@pytest.mark.parametrize(
    "text, family",
    [
        ("The snow was deep.", "change"),  # "now" inside a word
        ("My tooth hurts.", "additive"),  # "too" inside a word
        ("I'm busy right now.", "change"),  # "right now" is not a change of state
        ("Knowledge is power.", "negation"),  # "no" inside a word
    ],
)
def test_cues_respect_word_boundaries(text, family):
    assert cue_counts(text)[family] == 0


def test_several_expressions_add_up():
    counts = cue_counts("I left my job and moved to Denver; I'm a nurse now.")
    assert counts["change"] == 3


@pytest.mark.parametrize(
    "text, changes",
    [
        ("I've been playing for a month now, it's been tough but fun.", 0),  # how long, not a change
        ("I've had them for 3 years now and they bring me tons of joy!", 0),
        ("My club rides are on Saturdays now, Sundays are for family.", 1),  # a weekday, not a duration
        ("I work from home full-time now.", 1),
        ("Wow, that's amazing! How do you feel now that it's finished?", 0),  # asks, does not tell
        ("你现在住哪里？", 0),
        ("I'm doing well now. Did you move?", 1),
        ("I now work at Microsoft, how about you?", 1),
        ("我现在住在广州。你呢？", 1),
        ("It can be tough getting used to a new routine.", 0),  # accustomed, not a past habit
        ("I'm used to working late.", 0),
        ("I used to work at Google.", 1),
        ("We ended up in this amazing little bar.", 0),
        ("My contract ended in May.", 1),
    ],
)
def test_change_cues_count_what_is_told_not_durations_questions_or_habits(text, changes):
    assert cue_counts(text)["change"] == changes


@pytest.mark.parametrize(
    "text, asks",
    [
        ("Wow! What got you into running?", True),
        ("Nice one! How was the event? [image: a photo of a clothing store]", True),
        ("你去过那家店吗", True),
        ("周末去哪儿玩了？", True),
        ("Did you like it? I loved it.", False),
        ("Thanks, Mel! Let me know how it goes.", False),
    ],
)
def test_ends_asking_reads_the_last_sentence_after_any_attachment(text, asks):
    assert ends_asking(text) is asks


@pytest.mark.parametrize(
    "text, only_asks",
    [
        ("What's a good podcast about history?", True),
        ("帮我想一个周报的模板，要简洁点", True),
        ("Quick question, how long do I boil an egg?", True),  # a framing clause tells nothing
        ("What should I aim for, three months? Six?", True),  # the first clause asks itself
        ("有没有适合带饭的菜，第二天热了也好吃的？", True),
        ("对了，这个周末天气怎么样？", True),
        ("I just adopted a puppy, what should I feed her?", False),  # tells, then asks
        ("下个月要去广交会参展了，第一次去，展位上要准备些什么？", False),
        ("My passport expires next year, how early should I renew?", False),
    ],
)
def test_a_question_that_tells_something_first_is_not_only_a_request(text, only_asks):
    assert is_request(text) is only_asks
    assert asks_only(text) is only_asks


@pytest.mark.parametrize(
    "text, only_asks",
    [
        ("Just sold the Civic, what should I look at next?", False),  # the subject dropped, as chat does
        ("Finally paid off the car loan 🎉 what should I save for now?", False),  # an emoji breaks the clause
        ("Red or green curry, which is milder?", True),  # "red" is no verb in the past
        ("Say I adopted a cat, how much would food cost?", True),  # what would be, not what is
        ("如果我搬到杭州，房租大概多少？", True),
        ("我刚换了新工作，还能休年假吗", False),  # a question by 吗, with no question mark
        ("海边的民宿贵不贵", True),  # chat asks without a question mark: an A-not-A choice,
        ("上海现在首套房首付比例是多少", True),  # a question word last,
        ("是不是得去医院看看", True),  # or an A-not-A choice first
        ("我刚换了新工作，不知道年假有多少", False),  # it tells first
        ("how do I keep basil alive indoors", True),  # in English, a question word and its verb open the last clause
        ("ok and where's a good place to buy a used bike", True),
        ("Rent is steep here, which is why I cycle.", False),  # a relative clause asks nothing
        ("Hey Mel, what's up? Been a busy week.", False),
        ("Recommend a stroller, we're expecting twins in June.", False),  # a request, then why
        ("帮我写个自我介绍，我下周一入职新公司做前端开发", False),
        ("Recommend a novel, I want something light.", True),  # only what is wanted
        ("Explain how mortgages work.", True),  # an imperative to the assistant
        ("给我讲个笑话", True),
        ("Where can I hang the hammock I bought yesterday?", False),  # a fact inside the question
        ("我下周去成都出差要带什么？", False),
        ("Imagine I moved to Lisbon, where would I live?", True),
    ],
)
def test_a_request_reads_what_chat_tells_around_it(text, only_asks):
    assert is_request(text) is only_asks


@pytest.mark.parametrize(
    ("text", "onset"),
    [
        ("Just bought a secondhand campervan! 2009 Sprinter, needs some work.", True),
        ("Signed up for the Kyoto half marathon in February! How should I train?", True),
        ("We're fostering a kitten named Pickle for the next six weeks!", True),
        ("I've also started tutoring high schoolers in math on weekends.", True),
        ("最近入了一台海鸥DF-1胶片机，二手的，八百块。", True),
        ("我开始每周去游泳两次了，社区游泳馆。", True),
        ("Started running again after the knee surgery.", False),  # an episode of something known
        ("I started playing acoustic guitar about five years ago.", False),  # long past
        ("I'm starting to realize how much I needed a break.", False),
        ("Went for my usual run this morning.", False),
        ("Did you start the course yet?", False),  # asked, not told
        ("我又开始失眠了。", False),
    ],
)
def test_an_onset_is_something_just_begun_joined_or_acquired(text, onset):
    assert tells_onset(text) == onset
