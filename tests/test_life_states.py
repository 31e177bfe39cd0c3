"""Life states that exclude each other (`pcm.life_states`) and the corrections they route."""

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from evals.bench.scenarios import superseded_by
from pcm.api import PCM
from pcm.config import PCMContext
from pcm.formulas import LEVELS
from pcm.life_states import clashes, life_states, told_of_someone_else
from pcm.models import NodeType, RetrievedMemory
from pcm.perception.surprise import TurnSignals
from pcm.routing.models import RouterModel
from pcm.routing.routers import CalibratedRouter, Decision, Router
from pcm.speech_acts import asks_only, corrects_itself, states_nothing


@pytest.mark.parametrize(
    ("text", "facet", "state"),
    [
        ("Honestly I've been vegetarian since college.", "meat", "abstains"),
        ("Smoked a pork shoulder for nine hours for the potluck.", "meat", "consumes"),
        ("Had a veggie burger at the game.", "meat", None),
        ("I quit smoking three years ago and haven't had a single cigarette since.", "smoking", "abstains"),
        ("Stepped out for a smoke break with the new guy.", "smoking", "consumes"),
        ("We don't have kids and we're not planning to.", "children", "none"),
        ("Saw the heartbeat at our twelve-week scan today.", "children", "has"),
        ("My girlfriend and I are cooking for her parents.", "partner", "partnered"),
        ("We broke up last week.", "partner", "single"),
        ("I'm lucky, I'm not on any medication at all.", "medication", "none"),
        ("Need to refill my blood pressure pills.", "medication", "takes"),
        ("I've been retired since 2019.", "work", "retired"),
        ("Two weeks into freelancing full-time.", "work", "self_employed"),
        ("我对猫毛过敏，所以从来没养过宠物。", "pets", "none"),
        ("我家橘猫今天又把花盆推下去了。", "pets", "has"),
        ("我是一点辣都不能吃的。", "spicy", "abstains"),
        ("今晚又去吃了特辣的牛油火锅。", "spicy", "consumes"),
        ("我戒酒三年了。", "alcohol", "abstains"),
        ("Opened a bottle of Barolo with dinner.", "alcohol", "consumes"),
        ("I'm an accountant at Harlow & Pike.", "work", "employed"),
        ("I'm a sucker for chocolate.", "work", None),
        ("我在华为做硬件工程师。", "work", "employed"),
        ("我在家做饭。", "work", None),
        ("我跟男朋友在一起五年了。", "partner", "partnered"),
        ("I'm lactose intolerant, so pass the cheese board.", "dairy", "abstains"),
        ("Split a giant milkshake with my nephew.", "dairy", "consumes"),
        ("Got a scoop of ice cream? No, I made vegan ice cream.", "dairy", None),
        ("My thesis advisor wants another chapter by May.", "schooling", "postgraduate"),
        ("Sophomore year of college is way harder than I thought.", "schooling", "university"),
        ("高三了，每天刷题到半夜。", "schooling", "high_school"),
        ("Since graduating I've been sleeping in on weekdays.", "schooling", "graduated"),
        ("Back in college I was vegetarian for a year.", "meat", None),
        ("我以前抽烟，一天一包。", "smoking", None),
        ("Your steak looks amazing!", "meat", None),
        ("My sister-in-law is staying with us.", "siblings", None),
        ("My little brother just got his license.", "siblings", "has"),
        ("I can't speak a word of Japanese.", "skill:japanese", "lacks"),
        ("Presented our roadmap in Japanese to the Osaka office.", "skill:japanese", "uses"),
        ("我完全不懂德语。", "skill:german", "lacks"),
        ("My Vue frontend finally builds.", "skill:javascript", "uses"),
        ("I smoke about a pack a day, I know.", "smoking", "consumes"),
        ("Not single any more: I've been seeing a woman from my climbing gym.", "partner", "partnered"),
        ("Biscuit the puppy chewed through my charger.", "pets", "has"),
        ("Just so you know: I'm vegetarian.", "meat", "abstains"),  # a colon ends the clause naming "you"
        ("Carrying two EpiPens because of my peanut allergy.", "peanuts", "abstains"),
        ("Satay skewers with extra peanut sauce for dinner.", "peanuts", "consumes"),
        ("Found a nut-free peanut butter swap made from sunflower seed butter.", "peanuts", None),
        ("I'm coeliac, so the bakery is off limits.", "gluten", "abstains"),
        ("Baked a sourdough loaf this morning.", "gluten", "consumes"),
        ("Bought gluten-free spaghetti for the guests.", "gluten", None),
        ("Three weeks of keto and I miss bread.", "carbs", "abstains"),
        ("Two bowls of risotto, no regrets.", "carbs", "consumes"),
        ("我对猫毛过敏，朋友家有猫都不敢去。", "cats", "avoids"),
        ("Our tabby sleeps on the radiator all day.", "cats", "has"),
        ("I'm terrified of dogs since I was bitten.", "dogs", "avoids"),
        ("Took my two border collies to the beach.", "dogs", "has"),
        ("Covering the overnight shift on the ward again.", "shift", "nights"),
        ("Moved to day shifts, finally sleeping at night.", "shift", "days"),
        ("我这个月一直上白班。", "shift", "days"),
        ("For what it's worth, I don't take any regular medication.", "medication", "none"),
        ("Picked up my levothyroxine refill on the way home.", "medication", "takes"),
        ("Doctor gave me azithromycin for this sinus infection.", "medication", None),  # a course, not a standing one
        ("My wife and I decided kids aren't for us.", "children", "none"),
        ("Big news: my wife is 12 weeks pregnant!", "children", "has"),
        ("My sister is pregnant with twins.", "children", None),
        ("I've never been abroad, not even once.", "abroad", "never"),
        ("Just got back from ten days in Japan, jet lag is brutal.", "abroad", "travelled"),
        ("刚从东京回来，浅草寺逛了一整天。", "abroad", "travelled"),
        ("Drove back from Denver last night.", "abroad", None),
        ("我电脑是 Windows 的，家里也没有任何苹果设备。", "apple_devices", "none"),
        ("My new MacBook arrived today.", "apple_devices", "has"),
        ("I only speak English, sadly.", "skill:portuguese", "lacks"),
        ("I only speak English, sadly.", "skill:english", None),
        ("My Portuguese tutor says my vowels are better.", "skill:portuguese", "uses"),
        ("I only speak English, but I'm learning Spanish.", "skill:spanish", "uses"),
        ("我最近在学日语，五十音还没背完。", "skill:japanese", "uses"),
        ("We rent, buying is out of reach here.", "housing", "rents"),
        ("The property tax bill went up again.", "housing", "owns"),
        ("Defending my dissertation in April, terrified.", "schooling", "postgraduate"),
        ("I'm in 11th grade and the workload is insane.", "schooling", "high_school"),
        ("Finally framed my diploma.", "schooling", "graduated"),
        ("Sticking to a meal plan this month.", "schooling", None),
        ("Got laid off on Tuesday with half the team.", "work", "unemployed"),
        ("It's been tough since I lost my job.", "work", None),  # a past event, not the state now
        ("I run my own bakery, up at 4am.", "work", "self_employed"),
        ("Officially debt-free as of today!", "debt", "none"),
        ("Student loan payments start again next month.", "debt", "has"),
        ("Deleted Tinder again, I give up.", "partner", "single"),
        ("Nicotine-free for 90 days now.", "smoking", "abstains"),
        ("Watched the sky light up with meteors.", "smoking", None),
        ("My little brother just started vaping.", "smoking", None),
        ("If I ever make it to Napa I want a whole wine tasting day.", "alcohol", None),
        ("Bought non-alcoholic beer for the party.", "alcohol", None),
        ("I'm building a library for when I have kids.", "children", None),
        ("I have two daughters, 6 and 9.", "children", "has"),
        ("Passed the JLPT N3 this morning!", "skill:japanese", "uses"),
        ("I know zero JavaScript.", "skill:javascript", "lacks"),
        ("从来没写过Python。", "skill:python", "lacks"),
        ("我养了只柯基，腿短跑得快。", "pets", "has"),
        ("We've been trying for a baby for about a year now.", "children", None),  # not "baby For" by name
        ("We've been trying for a baby for about a year now.", "pregnancy", "trying"),
        ("15 weeks tomorrow and the morning sickness is finally easing.", "pregnancy", "expecting"),
        ("我们备孕快一年了。", "pregnancy", "trying"),
        ("Baby Emma is teething.", "children", "has"),
        ("Sold the Golf two weeks ago, the S-Bahn it is.", "car", "none"),
        ("I've given up on Italian and switched to Greek.", "skill:italian", "lacks"),  # a language given up
        ("日语我已经放弃了，太难了。", "skill:japanese", "lacks"),
        ("My sister gave up on German.", "skill:german", None),
        ("My Civic needs new tyres.", "car", "has"),
    ],
)
def test_life_states_reads_the_state_a_text_asserts_about_its_speaker(text, facet, state):
    assert life_states(text).get(facet) == state


def test_a_clause_about_someone_else_asserts_nothing_about_the_speaker():
    assert "meat" not in life_states("My sister is vegan, she hates the smell of bacon.")
    assert "alcohol" not in life_states("今晚部门聚餐，大家都在喝白酒，我点了可乐。")
    assert life_states("My wife loved the kneeling pad!")["partner"] == "partnered"
    # company is not the subject: "with my sister", "跟同事"
    assert life_states("Had a huge steak with my sister tonight.")["meat"] == "consumes"
    assert life_states("今晚又跟同事去吃了特辣的牛油火锅。")["spicy"] == "consumes"
    # a person with the speaker ("my wife and I"), or whose thing the speaker acts on ("my friend's recipe")
    assert life_states("My wife and I don't want kids.")["children"] == "none"
    assert life_states("Made my friend's pork carnitas recipe on Sunday.")["meat"] == "consumes"
    assert "meat" not in life_states("My sister's vegan now.")
    # every person of the speaker's life is someone else in Chinese too: 闺蜜, 领导, 奶奶 as 朋友, 同事
    assert "housing" not in life_states("我闺蜜刚在嘉定买了房，她说首付掏空了六个钱包")
    assert "smoking" not in life_states("我们领导戒烟了，天天嚼口香糖。")
    assert life_states("我跟闺蜜去吃了火锅，特辣的。")["spicy"] == "consumes"
    # a Chinese clause with no subject of its own continues the one before it: the flat is hers
    assert "housing" not in life_states("她那个是期房，交房要两年")
    assert life_states("我们现在在浦东租房，房东人挺好的")["housing"] == "rents"


@pytest.mark.parametrize(
    ("text", "person"),
    [
        ("My brother sold his motorbike and bought a minivan now that the twins are here.", "brother"),
        ("So my best friend just relocated to Vancouver for a job.", "friend"),
        ("我老婆把她的车卖了，换了辆电动车。", "老婆"),
        ("我表哥刚搬到上海去了，以后见面没那么方便了。", "表哥"),
        # the speaker is subject or object somewhere: their own change may be told
        ("My wife got a job in Seattle, so we're moving next month.", None),
        ("My boss let me go on Friday.", None),
        ("My sister and I moved into a flat in Leith.", None),
        ("我老婆怀孕了，我们要搬家了。", None),
        # it does not open on someone the speaker knows
        ("Sold my motorbike and bought a minivan.", None),
        ("我把车卖了。", None),
    ],
)
def test_a_change_told_of_someone_else_names_them(text, person):
    assert told_of_someone_else(text) == person


class _AlwaysHigh(Router):
    def level(self, turn):
        return Decision("high", "test", {"high": 0.9})


def _turn(text, *memory_texts, signals=None, answers_question=False, revises_this_episode=False):
    memories = [
        RetrievedMemory(
            id=f"m-{i}",
            content=content,
            type=NodeType.FACT,
            domain="Personal",
            weight=0.8,
            similarity=0.5,
            intent_relevance=1.0,
            score=0.4,
        )
        for i, content in enumerate(memory_texts)
    ]
    return TurnSignals(
        text,
        memories,
        signals or {},
        {},
        [1 / 3] * 3,
        lambda: None,
        lambda found: None,
        [],
        answers_question,
        lambda: revises_this_episode,
    )


def test_a_change_told_of_someone_else_corrects_only_what_was_said_of_them():
    told = "My brother sold his motorbike and bought a minivan."
    decision = _AlwaysHigh().decide(_turn(told, "I ride a Kawasaki Ninja 650 to work most days."))
    assert (decision.level, decision.source) == ("medium", "someone-else")
    decision = _AlwaysHigh().decide(_turn(told, "I ride a Ninja 650.", "My brother rides a Ducati."))
    assert decision.level == "high"
    assert _AlwaysHigh().decide(_turn("Sold my motorbike, bought a minivan.", "I ride a Ninja 650.")).level == "high"


def test_an_answer_to_the_other_partys_question_develops_what_was_asked_about():
    said = "That's great! I just signed with a new team - excited for the season!"
    decision = _AlwaysHigh().decide(_turn("The Minnesota Wolves! I can't wait!", said, answers_question=True))
    assert (decision.level, decision.source) == ("medium", "answer")
    assert _AlwaysHigh().decide(_turn("The Minnesota Wolves! I can't wait!", said)).level == "high"
    # an answer that tells a change may revise: "No, I moved to Denver in May."
    moved = _turn(
        "No, I moved to Denver in May.", "I live in Boston.", signals={"change_cues": 1.0}, answers_question=True
    )
    assert _AlwaysHigh().decide(moved).level == "high"


class _SureHigh(Router):
    def __init__(self, source):
        self.source = source

    def level(self, turn):
        return Decision("high", self.source, {"low": 0.3, "medium": 0.1, "high": 0.6})


def test_a_turn_that_would_revise_only_what_its_speaker_said_this_episode_does_not_correct():
    told = "I used to compete in a few dance competitions and shows."
    said = "Dance is pretty much my go-to for stress relief."
    decision = _SureHigh("calibrated-cheap").decide(_turn(told, said, revises_this_episode=True))
    assert (decision.level, decision.source) == ("low", "same-episode")  # the likelier level that decays nothing
    assert _SureHigh("calibrated-cheap").decide(_turn(told, said)).level == "high"
    assert _SureHigh("llm").decide(_turn(told, said, revises_this_episode=True)).level == "high"
    # unless the speaker says they correct themselves
    slip = _turn("Sorry, I meant Portland, not Denver.", "I live in Denver.", revises_this_episode=True)
    assert _SureHigh("calibrated-cheap").decide(slip).level == "high"


@pytest.mark.parametrize(
    ("text", "corrects"),
    [
        ("Sorry, I meant Portland, not Denver.", True),
        ("Actually she's eight, not seven.", True),
        ("Oops, it's Tuesday.", True),
        ("我说错了，是上海不是北京。", True),
        ("I used to compete in a few dance competitions.", False),
        ("Sorry to hear that! Dance is my go-to.", False),
        ("Sorry I'm late, the traffic was awful.", False),
        ("我以前跳过舞。", False),
    ],
)
def test_a_speaker_says_when_they_correct_themselves(text, corrects):
    assert corrects_itself(text) == corrects


def test_dialogue_episodes_are_read_from_the_window_and_the_time_a_memory_was_said():
    from datetime import datetime, timezone

    from pcm.perception.working_memory import in_dialogue, said_in_episode

    jon = {"role": "user", "speaker": "Jon", "content": "Did you ever perform?", "timestamp": "2023-01-20T16:04:00"}
    gina = {**jon, "speaker": "Gina", "content": "Dance is my go-to."}
    assistant = {"role": "assistant", "content": "Nice!", "timestamp": "2023-01-20T16:04:00"}
    assert in_dialogue([gina, jon], "Gina", "2023-01-20T16:05:00", 60)
    assert not in_dialogue([gina], "Gina", "2023-01-20T16:05:00", 60)  # alone: no other party
    assert not in_dialogue([gina, jon], "Gina", "2023-01-27T16:05:00", 60)  # a week later: a new episode
    assert not in_dialogue([assistant], None, "2023-01-20T16:05:00", 60)  # told to the assistant, for memory
    said = datetime(2023, 1, 20, 16, 4, tzinfo=timezone.utc)
    assert said_in_episode(said, "2023-01-20T16:30:00", 60)
    assert not said_in_episode(said, "2023-01-21T16:30:00", 60)
    assert not said_in_episode(None, "2023-01-20T16:30:00", 60)  # unknown: not this episode


def test_in_a_dialogue_a_speaker_telling_their_story_does_not_retire_what_they_said_minutes_before(ctx):
    stress_relief = "Sorry to hear that! Dance is pretty much my go-to for stress relief. Got any fave styles?"

    def replay(last_said_at):
        pcm = PCM(ctx.replace(data_dir=f"{ctx.data_dir}-{last_said_at[:10]}"), checkpointer=InMemorySaver())
        said_at = "2023-01-20T16:04:00"
        for speaker, text in [
            ("Jon", "Hey Gina! I lost my job as a banker, so I'm starting my own business."),
            ("Gina", stress_relief),
            ("Jon", "Contemporary is my top pick. Did you ever perform?"),
        ]:
            pcm.process(text, user_id="u", speaker=speaker, timestamp=said_at)
        told = "I used to compete in a few dance competitions and shows - my team won first place at regionals."
        out = pcm.process(told, user_id="u", speaker="Gina", timestamp=last_said_at)
        graph = pcm.memory("u")
        return out, [graph.node(e.target).content for e in graph.edges() if e.relation == "supersedes"]

    # a month later the same words are routed as the router reads them (here: a correction)
    later, retired = replay("2023-02-20T16:04:00")
    assert (later["surprisal"]["level"], later["agent"], retired) == ("high", "correction", [f"Gina: {stress_relief}"])
    same, retired = replay("2023-01-20T16:04:00")
    assert (same["surprisal"]["level_source"], same["agent"], retired) == ("same-episode", "maintenance", [])


def test_home_places_are_open_values_that_clash_only_when_disjoint():
    shared_house = "So I'm in a shared house in Headingley, Leeds, with three others."
    assert life_states(shared_house)["home"] == {"headingley", "leeds"}
    assert clashes("Walking to work is the best part of living in Edinburgh.", "I live in Leeds.") == ["home"]
    assert clashes("Living in Leeds is cheap.", "I'm in a shared house in Headingley, Leeds.") == []
    assert clashes("搬到深圳快一个月了，天天下雨。", "我现在住在杭州西湖区。") == ["home"]
    assert clashes("Officially a Boston resident as of this week.", "I live in Denver.") == ["home"]
    assert "home" not in life_states("She is a Paris resident.")


def test_employers_and_fields_of_study_are_open_values():
    assert life_states("I'm a data analyst at Northwind Traders.")["employer"] == {"northwind", "traders"}
    assert "employer" not in life_states("Since I lost my job at Northwind, things have been tough.")
    assert "employer" not in life_states("My husband works at Northwind.")
    assert clashes("Second week at Contoso and I love the team.", "I'm a data analyst at Northwind Traders.") == [
        "employer"
    ]
    assert clashes("入职字节快一个月了。", "我在百度做搜索。") == ["employer"]
    assert clashes("Loving my job at Northwind these days.", "I'm a data analyst at Northwind Traders.") == []
    assert life_states("I'm majoring in marine biology.")["study"] == {"marine biology"}
    assert clashes("I switched my major to history.", "I'm majoring in marine biology.") == ["study"]


def test_occupations_are_open_values_read_from_a_profession_now_practised():
    backend = "I'm a Python backend developer, and I build all our services with FastAPI."
    research = "I've decided to quit programming and become a full-time AI researcher."
    assert life_states(backend)["occupation"] == {"engineer"}
    assert clashes(research, backend) == ["occupation"]
    assert clashes("我决定放弃编程，全职转做 AI 研究员", "我是一名 Python 后端开发者。") == ["occupation"]
    assert clashes("I'm a senior software engineer at the bank.", backend) == []  # synonyms share one name
    for wish_or_past in (
        "I want to become a chef someday.",
        "Training to become a paramedic so I can cover both roles.",
        "I'm a former nurse.",
        "I'm a huge fan of teachers.",
        "My wife is a nurse.",
        "我想成为医生",
        # someone else's profession
        "I'm seeing a therapist.",
        "I'm meeting my lawyer tomorrow.",
        "I'm glad the doctor said it's fine.",
        "我是去看医生了",
    ):
        assert "occupation" not in life_states(wish_or_past), wish_or_past


def test_a_shellfish_allergy_excludes_shellfish_not_fish():
    allergy = "I'm allergic to shellfish — shrimp, crab, lobster, all of it makes my throat close up."
    assert life_states(allergy) == {"shellfish": "abstains"}  # the list of shellfish is not eating them
    assert clashes("Trying to eat more oily fish like salmon for the omega-3s.", allergy) == []
    assert clashes("Had lobster rolls at the pier!", allergy) == ["shellfish"]
    assert clashes("Had lobster rolls at the pier!", "I'm vegetarian.") == ["seafood"]
    assert "seafood" not in life_states("At seafood restaurants I always end up with the grilled chicken.")


def test_a_language_someone_lacks_clashes_with_using_it():
    assert clashes("Negotiated the whole contract in Spanish today.", "I don't speak Spanish at all.") == [
        "skill:spanish"
    ]
    assert clashes("用日语跟客户开了个会。", "我日语特别差。") == ["skill:japanese"]
    assert clashes("Wrote a small CLI in Rust.", "I can't speak Spanish.") == []


def test_allergies_and_diets_exclude_what_they_rule_out():
    assert clashes("Spread peanut butter on my toast.", "I have a severe peanut allergy.") == ["peanuts"]
    assert clashes("我家猫又把杯子推下去了。", "我对猫严重过敏。") == ["cats"]
    assert clashes("Made fresh ramen from scratch.", "I have coeliac disease.") == ["gluten"]
    assert clashes("Made a gluten-free lasagna for my sister.", "I have coeliac disease.") == []
    assert clashes("Back on day shifts from next week.", "Night shifts at the hospital again.") == ["shift"]
    assert clashes("Grabbed lunch after my overnight shift.", "I work night shifts at the depot.") == []


def test_clashes_are_the_facets_with_different_states():
    assert clashes("Grilled a ribeye steak tonight.", "I'm vegan, no animal products.") == ["meat"]
    assert clashes("Made a lentil curry again tonight.", "I'm vegan, no animal products.") == []
    assert clashes("Walked both huskies at 6am.", "We have a parakeet named Pip.") == []
    assert clashes("Took the Subaru in for an oil change.", "I don't own a car, I bike everywhere.") == ["car"]
    assert clashes("Two weeks into freelancing since I quit the firm.", "I'm an accountant at Harlow & Pike.") == [
        "work"
    ]


def test_a_life_state_clash_routes_a_correction_that_retires_only_the_excluded_fact(ctx):
    pcm = PCM(ctx, checkpointer=InMemorySaver())
    user = "ls"
    history = [
        "Honestly I've been vegetarian since my second year of college, that's eleven years now.",
        "Can you suggest some easy weeknight dinners?",
        "My brother is visiting next month and I want to plan a hike.",
        "Back from my parents', six hours of driving in total.",
    ]
    for text in history:
        pcm.process(text, user_id=user)
    out = pcm.process("Smoked a pork shoulder for nine hours for the neighborhood potluck.", user_id=user)
    assert out["surprisal"]["level_source"] == "life-state"
    assert out["surprisal"]["level"] == "high" and out["agent"] == "correction"
    assert superseded_by(pcm.memory(user), out["changes"][0]["node_id"]) == [history[0]]
    # the ablation: without the table the same turn is not a correction of that fact
    off = PCM(ctx.replace(life_states=False, data_dir=ctx.data_dir + "-off"), checkpointer=InMemorySaver())
    for text in history:
        off.process(text, user_id=user)
    packet = off.process("Smoked a pork shoulder for nine hours for the neighborhood potluck.", user_id=user)
    assert packet["surprisal"]["level_source"] != "life-state"


def test_what_a_speaker_holds_on_a_facet_is_their_latest_statement_about_it(ctx):
    from pcm.world.retrieval import life_state_clashes

    pcm = PCM(ctx.replace(router="off"), checkpointer=InMemorySaver())
    user = "latest"
    for text in (
        "I've been vegetarian for ten years.",
        "I started eating meat again last spring, I'm on a burger kick.",
    ):
        pcm.process(text, user_id=user)
    graph = pcm.memory(user)
    # the later statement holds: a steak clashes with nothing; abstaining clashes with the later one
    assert life_state_clashes(graph, "Grilled a ribeye steak tonight.", None, ctx) == []
    back = life_state_clashes(graph, "I'm vegan again since January.", None, ctx)
    assert [m.content for m in back] == ["I started eating meat again last spring, I'm on a burger kick."]
    assert back[0].via == "life-state"
    # only the `reach` latest facts are read: one later unrelated fact puts the meat-again fact out of reach 1
    pcm.process("The weather was lovely on my walk today.", user_id=user)
    graph = pcm.memory(user)
    assert life_state_clashes(graph, "I'm vegan again since January.", None, ctx, reach=1) == []
    assert len(life_state_clashes(graph, "I'm vegan again since January.", None, ctx, reach=2)) == 1
    # another speaker's facts are not theirs to revise
    assert life_state_clashes(graph, "I'm vegan again since January.", "Caroline", ctx) == []


def test_every_statement_of_the_state_a_speaker_holds_clashes_with_its_revision(ctx):
    from pcm.world.retrieval import life_state_clashes

    pcm = PCM(ctx.replace(router="off"), checkpointer=InMemorySaver())
    user = "renter"
    for text in (
        "We rent a flat in Pudong, 8,500 a month.",  # housing: rents
        "My sister just bought a house in Leeds.",  # about someone else: says nothing of the speaker
        "OK, I'll tell my landlord the boiler is broken again.",  # rents, said again
        "Work was busy today.",
    ):
        pcm.process(text, user_id=user)
    graph = pcm.memory(user)
    found = life_state_clashes(graph, "Just closed on our house, so long landlords!", None, ctx)
    assert [m.content for m in found] == [
        "We rent a flat in Pudong, 8,500 a month.",
        "OK, I'll tell my landlord the boiler is broken again.",
    ]
    # a state that changed in between starts a new run: only what was said since the change is held
    pcm.process("We just bought a house!", user_id=user)
    found = life_state_clashes(pcm.memory(user), "Our lease is up in May.", None, ctx)
    assert [m.content for m in found] == ["We just bought a house!"]


def test_a_turn_that_only_asks_corrects_nothing():
    asked = "Cool! What position are you playing for the team? Any exciting games coming up?"
    decision = _AlwaysHigh().decide(_turn(asked, "Woohoo! Congrats on the new team. Which team did you sign with?"))
    assert (decision.level, decision.source) == ("low", "question")
    assert _AlwaysHigh().decide(_turn("Thanks, Mel! 你们去哪了？", "We went camping.")).source == "question"
    # a sentence that tells something is not an interjection, even before a question
    for told in ("Wow! I moved to Austin. How is the weather there?", "Engaged! Any tips for the wedding?"):
        assert _AlwaysHigh().decide(_turn(told, "I live in Boston and I'm single.")).level == "high"
    assert not asks_only("Cool!")  # asks nothing either


@pytest.mark.parametrize("text", ["hi", "ok cool", "Thanks, Mel!", "谢谢啦", "好的，谢谢", "周末好", "你好"])
def test_a_greeting_or_thanks_corrects_nothing(text):
    assert states_nothing(text)
    decision = _AlwaysHigh().decide(_turn(text, "I'm vegetarian, have been since college."))
    assert (decision.level, decision.source) == ("low", "states-nothing")


@pytest.mark.parametrize(
    "text", ["Thanks, I moved to Austin.", "谢谢你的建议", "好，我们项目已经用Pinia了", "Cool!!! What now?"]
)
def test_a_turn_that_tells_or_asks_is_more_than_a_greeting(text):
    assert not states_nothing(text)


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("I boulder 3-4 times a week at the local gym", "does"),
        ("Surgeon says no climbing for at least 9 months", "stopped"),
        ("I've been climbing for 3 years", "does"),
        ("haven't climbed since the surgery", "stopped"),
        ("我每周去攀岩两次", "does"),
        ("膝盖伤了，攀岩彻底停了", "stopped"),
        ("I used to climb every week in college", None),  # the past
        ("My brother climbs every weekend", None),  # someone else
        ("I'd love to try climbing someday", None),  # a wish
        ("大学的时候我是攀岩队的", None),  # the past, in Chinese
    ],
)
def test_a_sport_is_read_as_practised_or_stopped(text, state):
    assert life_states(text).get("sport:climbing") == state


def test_stopping_a_sport_clashes_with_practising_it_and_gear_sold_or_cancelled_says_stopped():
    assert clashes("Any rehab ideas? Surgeon says no climbing for 9 months", "I boulder 3-4 times a week") == [
        "sport:climbing"
    ]
    assert life_states("cancelled my gym membership, I'm not lifting anymore")["sport:gym"] == "stopped"
    assert life_states("医生说三个月不能跑")["sport:running"] == "stopped"
    assert life_states("I run a small bakery every day").get("sport:running") is None  # running a business
    assert not clashes("my tennis lesson got moved to Friday", "I play tennis every Sunday")


@pytest.mark.parametrize(
    ("text", "facet", "state"),
    [
        ("We had to put our beagle down on Friday", "dogs", "lost"),
        ("my cat passed away last night", "cats", "lost"),
        ("our rabbit died this morning", "pets", "lost"),
        ("家里的狗狗昨天走了", "dogs", "lost"),
        ("只好把兔子送人了", "pets", "lost"),
        ("my neighbour's dog passed away", "dogs", None),  # someone else's
        ("my childhood dog died when I was 10", "dogs", None),  # long ago
        ("猫粮没了", "cats", None),  # the food ran out, not the cat
    ],
)
def test_a_pet_that_died_or_went_for_good_is_lost(text, facet, state):
    assert life_states(text).get(facet) == state


def test_losing_a_pet_clashes_with_having_it():
    assert "cats" in clashes("my cat passed away last night", "my cat Luna sleeps on my keyboard")


class _SureLow(Router):
    def level(self, turn):
        return Decision("low", "calibrated-cheap", {"low": 0.9, "medium": 0.05, "high": 0.05})


def test_a_turn_that_tells_an_onset_is_new_even_when_it_resembles_what_is_known():
    said = "We took the van up the coast again last weekend."
    decision = _SureLow().decide(_turn("Just bought a secondhand campervan! What should I check first?", said))
    assert (decision.level, decision.source) == ("medium", "onset")
    assert _SureLow().decide(_turn("Took the van out again this weekend.", said)).level == "low"
    assert _SureHigh("calibrated").decide(_turn("Just bought a new car, sold the old one.", said)).level == "high"


@pytest.mark.parametrize(
    ("text", "facet", "drugs"),
    [
        ("week 3 on sertraline and the nausea is finally easing up", "antidepressant", {"sertraline"}),
        ("is it ok to have coffee on 20mg citalopram? I've been on it a year", "antidepressant", {"citalopram"}),
        ("they moved me from lexapro to zoloft last week", "antidepressant", {"sertraline"}),
        ("the lexapro makes me yawn so much", "antidepressant", {"escitalopram"}),
        ("医生把我的立普妥换成了可定", "statin", {"rosuvastatin"}),
        ("我在吃舍曲林，每天50mg", "antidepressant", {"sertraline"}),
        ("got my mirena put in yesterday", "birth_control", {"iud"}),
        ("crestor 10 — does it matter if i take it morning or night", "statin", {"rosuvastatin"}),
        ("my mom's on warfarin", "anticoagulant", None),  # someone else's
        ("i was on prozac in college", "antidepressant", None),  # the past
        ("finally off the sertraline!", "antidepressant", None),  # given up
        ("is zoloft or lexapro better for anxiety?", "antidepressant", None),  # compared, asked
        ("should I ask about switching to wellbutrin?", "antidepressant", None),  # weighed
        ("我妈在吃华法林", "anticoagulant", None),
    ],
)
def test_a_medicine_is_read_by_its_class_where_the_speaker_takes_it_now(text, facet, drugs):
    assert life_states(text).get(f"medicine:{facet}") == (frozenset(drugs) if drugs else None)


def test_two_medicines_of_one_class_clash_and_the_same_one_by_another_name_does_not():
    taken = "also is it ok to have coffee on 20mg citalopram? I've been on it about a year for anxiety"
    assert clashes("week 3 on sertraline and the nausea is easing up", taken) == ["medicine:antidepressant"]
    assert clashes("week 3 on celexa now", taken) == []  # citalopram by its brand
    assert clashes("started on atorvastatin last month", taken) == []  # another class


def test_a_pet_named_only_by_the_name_it_was_given_is_lost_when_its_death_is_told():
    from pcm.life_states import states_clash, states_with_pets_named

    said = ["兔子能吃香蕉吗", "我养了一只兔子，叫团子，两岁了，垂耳兔"]
    told = "团子走了快一个月了，笼子和草架还一直放在阳台上"
    assert life_states(told).get("pets") is None  # alone it names no pet
    stated = states_with_pets_named(told, said)
    assert stated["pets"] == "lost" and states_clash(stated, said[1]) == ["pets"]
    biscuit = states_with_pets_named("Biscuit passed away on Sunday", ["Our beagle, Biscuit, hates rain"])
    assert biscuit["pets"] == "lost"
    assert "pets" not in states_with_pets_named("Max passed his driving test!", ["my dog Max loves the beach"])
    for loss in ("We lost Biscuit in May.", "Said goodbye to Biscuit this morning."):
        assert states_with_pets_named(loss, ["Our beagle, Biscuit, hates rain"])["pets"] == "lost"
    assert "pets" not in states_with_pets_named("We lost Biscuit's leash at the park.", ["our beagle, Biscuit"])
    assert "pets" not in states_with_pets_named("团子走了快一个月了", ["我朋友叫团子"])  # not a pet's name


def _router_model(intercept: list[float]) -> RouterModel:
    """A router model that reads nothing and answers P(level) = softmax(`intercept`) (low, medium, high)."""
    return RouterModel(
        {
            "features": ["change_cues"],
            "classes": list(LEVELS),
            "mean": [0.0],
            "scale": [1.0],
            "coef": [[0.0]] * 3,
            "intercept": intercept,
        }
    )


def test_the_cheap_router_corrects_only_on_a_cue_of_change():
    sure_high, sure_low = _router_model([0.0, 0.0, 5.0]), _router_model([5.0, 0.0, 0.0])
    router = CalibratedRouter(sure_high, sure_low, confidence=0.6, uncued_memories=8)
    said = "I'm learning the guitar, two years now."
    uncued = _turn("Still can't play an F chord, it's torture.", said, signals={"change_cues": 0.0})
    assert (router.level(uncued).level, router.level(uncued).source) == ("low", "calibrated")  # the full stage decides
    cued = _turn("I gave up the guitar last month.", said, signals={"change_cues": 1.0})
    assert (router.level(cued).level, router.level(cued).source) == ("high", "calibrated-cheap")


def test_an_uncued_correction_is_trusted_only_in_a_small_memory():
    sure_high = _router_model([0.0, 0.0, 5.0])
    router = CalibratedRouter(sure_high, sure_high, confidence=0.6, uncued_memories=8)
    uncued = _turn("I live in Denver, moved here for work.", "I grew up in Ohio.", signals={"change_cues": 0.0})
    uncued.memory_size = 3  # a new user: the pair verdicts alone may correct
    assert (router.level(uncued).level, router.level(uncued).source) == ("high", "calibrated")
    uncued.memory_size = 8  # among many memories the turn is unsure: offline, the safer level
    assert (router.level(uncued).level, router.level(uncued).source) == ("low", "calibrated-cautious")
    cued = _turn("I moved to Denver last month.", "I live in Ohio.", signals={"change_cues": 1.0})
    cued.memory_size = 50  # a cue of change corrects at any size
    assert router.level(cued).level == "high"
    with pytest.raises(ValueError, match="uncued_correction_memories"):
        PCMContext(uncued_correction_memories=-1)
