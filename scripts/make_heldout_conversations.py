"""Generate the two held-out evaluation conversations from a seed (issue 17, item 4).

    python scripts/make_heldout_conversations.py           # writes both files in data/evaluation/
    python scripts/make_heldout_conversations.py --check   # exit 1 if a committed file differs
    python scripts/make_heldout_conversations.py --seed 3 --out /tmp/other   # a folder

Every memory rule in helpers/ was chosen while looking at the conversations it is scored on
(hard, friends, long). These two are a TEST SET: new templates, new people, new facts, and no
rule or number in helpers/ was chosen on them. Report results on them apart, and do not tune on
them (a rule changed after looking at them makes them one more tuning set).

``heldout_two_person.json``: two people (speaker "user" and speaker "assistant", both named
people) over 22 dated sessions. Both state facts about themselves in passing; a session opens with
either of them; a speaker often sends two messages in a row (a fact split over them); relative
dates ("last Tuesday") need the session's date; facts change later; "both" questions need one
line of each. A final new session asks the probes, mostly by name in the third person.

``heldout_assistant.json``: a user and an AI assistant whose replies read like a real model's:
several sentences, first person ("I'd be happy to ...", "I remember you said ..."), suggestions
and lists. The replies restate the user's facts (echo) and add generic advice, never a fact of
their own. Only the user's lines are evidence.

The story is fixed; the seed picks names and values, dates, who opens a session, where the small
talk goes, how the assistant's replies are put together and the order of the probes. Same seed,
same bytes. The format is the hard conversation's (data/evaluation/README.md).
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or loaded by path
from conversation_cli import WEEKDAYS, build_probes, fill, render, resolve_when  # noqa: E402

DEFAULT_DIR = Path(__file__).resolve().parent.parent / "data/evaluation"
NAMES = ("heldout_two_person", "heldout_assistant")
CATEGORIES = ("single-hop", "multi-hop", "temporal", "updated-fact", "unanswerable")
HELD_OUT_NOTE = ("Held-out test set: written after the memory rules were chosen; no rule or "
                 "number in helpers/ was chosen on it. Report results on it apart; do not tune "
                 "on it.")


def line(who, text, label=None, kind="fact", facts=None, when=None):
    """One line of speaker ``who`` ("A": the user side, "B": the assistant side). Without a label
    it is small talk (kind "filler"); ``when`` is a relative date ({when} in the text)."""
    return {"who": who, "text": text, "label": label, "kind": kind if label else "filler",
            "facts": list(facts) if facts is not None else ([label] if label else []),
            "when": when}


def A(text, label=None, kind="fact", facts=None, when=None):  # noqa: N802 (a table constructor)
    return line("A", text, label, kind, facts, when)


def B(text, label=None, kind="fact", facts=None, when=None):  # noqa: N802
    return line("B", text, label, kind, facts, when)


def person(question: str, names: list[str]) -> str:
    """"third" (by name), "first" (I/my), "second" (you/your) or "none"."""
    if re.search(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b", question):
        return "third"
    if re.search(r"\b(?:I|I'm|my|me|am)\b", question):
        return "first"
    if re.search(r"\b(?:you|your)\b", question):
        return "second"
    return "none"


def session_dates(rng: random.Random, start: dt.date, count: int, gap=(6, 10)) -> list[dt.date]:
    """``count`` story session dates ``gap`` days apart, then the probe session 12-25 days on."""
    dates = [start + dt.timedelta(days=rng.randint(0, 6))]
    for _ in range(count - 1):
        dates.append(dates[-1] + dt.timedelta(days=rng.randint(*gap)))
    dates.append(dates[-1] + dt.timedelta(days=rng.randint(12, 25)))
    return dates


# ===============================================================================================
# 1. heldout_two_person: A (speaker "user") and B (speaker "assistant"), two old friends
# ===============================================================================================

POOLS_2P = {
    "A": ["Idris", "Callum", "Mateo", "Oskar"],
    "B": ["Ingrid", "Rhea", "Beatriz", "Yara"],
    "a_theatre": ["the Lyceum", "the Alhambra", "the Grand Playhouse"],
    "a_radio": ["Riverside FM", "Canal Radio", "Hilltop FM"],
    "a_city1": ["Sheffield", "Nottingham", "Exeter"],
    "a_city2": ["Glasgow", "Belfast", "Swansea"],
    "a_moto": ["Honda CB400", "Triumph Bonneville", "Yamaha XS650"],
    "a_twin": ["Farah", "Greta", "Lucia"],
    "a_starter": ["Doughbert", "Clint Yeastwood", "Bready Mercury"],
    "a_trip": [("Patagonia", "Georgia"), ("Vietnam", "Sardinia"), ("Morocco", "Slovenia")],
    "a_hometown": ["Kendal", "Oban", "Penzance"],
    "a_honey": ["eleven", "fourteen", "seventeen"],
    "band": ["Khruangbin", "Fontaines D.C.", "Wet Leg"],
    "b_village": ["Hathersage", "Ambleside", "Crickhowell"],
    "b_wife": ["Solveig", "Marisol", "Noor"],
    "b_horse": ["Juniper", "Pilot", "Hazel"],
    "b_zoo": ["Chester Zoo", "Twycross Zoo", "Paignton Zoo"],
    "b_stepson": ["Rafi", "Ezra", "Milo"],
    "b_trip": [("Madeira", "the Faroe Islands"), ("Sri Lanka", "Andalusia"),
               ("Tasmania", "the Azores")],
    "b_mumtown": ["Hexham", "Ludlow", "Whitstable"],
    "b_tattoo": ["fox", "hare", "heron"],
}


def pick_values_2p(rng: random.Random) -> dict[str, str]:
    v = {k: rng.choice(pool) for k, pool in POOLS_2P.items()}
    v["a_trip1"], v["a_trip2"] = v.pop("a_trip")
    v["b_trip1"], v["b_trip2"] = v.pop("b_trip")
    return v


# A session is a list of blocks kept together (in order); small talk goes between blocks.
STORY_2P = [
    # 1: A's job and home; B's job
    [[A("Still mixing sound at {a_theatre} most nights, so my body clock thinks I'm a bat. The "
        "musical this season has forty radio mics and every one of them hates me.", "a_job1",
        facts=["a_job"]),
      B("Forty mics, I'd cry. Are you still living on the boat?"),
      A("Still on the narrowboat, moored on the canal in {a_city1}. It's cosy until the stove "
        "goes out.", "a_home1", facts=["a_home"])],
     [B("Things here are muddy. It's calving season, so I'm out at farms at three in the morning "
        "with my arm inside a cow.", "b_job1", facts=["b_job"]),
      A("That is the most vet sentence I've ever heard."),
      B("Six years at the mixed practice in the hills now and I still love it, mostly.",
        "b_job1b", facts=["b_job"])]],
    # 2: B's horse (two messages in a row); A's bees; A's trip
    [[B("I have to tell you about my new girl."),
      B("She's a grey Connemara mare called {b_horse}, twelve years old, and she already bosses "
        "the sheep around.", "b_horse"),
      A("A horse! You finally did it. Photos, please."),
      B("Incoming. She hates having her picture taken.")],
     [A("My bees made it through their first summer. Two hives on the allotment behind the lock, "
        "and we got {a_honey} jars of honey out of them.", "a_bees", facts=["a_hives", "a_honey"]),
      B("Save me a jar! Do they sting you much?"),
      A("Only when I'm smug.")],
     [A("I'm thinking of three weeks walking in {a_trip1} next spring.", "a_trip1",
        facts=["a_trip"]),
      B("Do it before you get old and sensible.")]],
    # 3: A's motorbike (two in a row, relative date); B's wife (two in a row); B's stepson
    [[A("So I did a thing."),
      A("I bought the motorbike {when}. A 1978 {a_moto}, bright orange, and the clutch is "
        "already complaining.", "a_moto", when="last_weekday"),
      B("You and your old machines. Does it actually run?"),
      A("Mostly downhill.")],
     [B("{b_wife} says hi, by the way. She's got a stall at the design fair this month.",
        "b_wife"),
      B("She blows glass, did I ever tell you? Bowls, lamps and one very ugly vase she refuses "
        "to sell.", "b_wife_job", facts=["b_wife"]),
      A("Glassblowing is so cool. I'd set my eyebrows on fire.")],
     [B("And my stepson {b_stepson} is with us half the week now. Fifteen, six foot, eats like a "
        "combine harvester.", "b_stepson"),
      A("Fifteen! I remember him as a toddler.")]],
    # 4: both swim on Saturday mornings; A's chess club
    [[B("We joined the Saturday morning lake swimmers in the village. Freezing, but I feel "
        "incredible afterwards.", "b_swim"),
      A("Ha! Every Saturday morning I do the cold water swim at the lido before work. Best and "
        "worst hour of my week.", "a_swim"),
      B("Lake swimmers, lido swimmers. We're the same person.")],
     [A("I joined a chess club that meets in the back room of a pub on Wednesday nights.",
        "a_chess1", facts=["a_chess"]),
      B("You always beat me at chess. I'm sticking to Scrabble."),
      A("Scrabble is just chess for people who like arguing.")]],
    # 5: B's tattoo (relative date); A's twin (two in a row)
    [[B("I got a tattoo {when}! A little {b_tattoo} on my ankle, my first one.", "b_tattoo",
        when="last_weekday"),
      A("You?! Did it hurt?"),
      B("Like a cat scratching the same spot for an hour.")],
     [A("My twin sister {a_twin} got her wings, finally."),
      A("She's flying the air ambulance helicopter out of the city hospital now. Mum is proud "
        "and terrified in equal measure.", "a_twin", facts=["a_twin"]),
      B("An air ambulance pilot! Tell her she's a legend.")]],
    # 6: A's toe (yesterday); B's stepson's robot (the day before yesterday)
    [[A("I dropped a speaker stack on my foot {when} and broke my toe.", "a_toe",
        when="yesterday"),
      B("Oh no! Are you hobbling round backstage?"),
      A("In a very glamorous medical boot.")],
     [B("{b_stepson} won the regional robotics competition {when}! His robot sorts recycling.",
        "b_robot", when="day_before_yesterday"),
      A("That's brilliant. Tell him I want one for the boat."),
      B("It's the size of a wheelie bin, so no.")]],
    # 7: both grow chillies; B's mum; A's gran (relative date)
    [[A("The boat roof is covered in chilli plants now. Nine pots of scotch bonnets up there.",
        "a_chilli"),
      B("Same! My polytunnel is all chillies this year, I've no idea what we'll do with them.",
        "b_chilli"),
      B("My mum wants them for the café in her bookshop. She runs a little bookshop in "
        "{b_mumtown}.", "b_mum")],
     [A("It was my gran's ninetieth {when}. Forty relatives in a church hall and she danced "
        "with every single one of them.", "a_gran", when="last_weekday"),
      B("Ninety and dancing! Goals.")]],
    # 8: B's certificate (yesterday); A's hometown; A's sourdough
    [[B("I passed my exotic animals certificate {when}! Reptiles, birds, the lot.", "b_cert",
        when="yesterday"),
      A("Congratulations! That reminds me of school trips to the reptile house back in "
        "{a_hometown}, where I grew up.", "a_hometown"),
      B("You were scared of the iguana, weren't you?")],
     [A("Also I've started a sourdough starter. I named him {a_starter} and he lives on top of "
        "the fridge.", "a_starter"),
      B("You named your yeast. Of course you did."),
      A("He has a personality!"),
      A("A sour one.")]],
    # 9: both saw the band; B's orchestra
    [[A("I saw {band} at the festival {when}, right at the front. My ears are still ringing, "
        "and I'm a sound engineer, I should know better.", "a_band", when="last_weekday"),
      B("No way! I saw {band} at the arena last year, best gig of my life.", "b_band")],
     [B("I'm still playing double bass in the community orchestra on Thursday evenings. We've "
        "got a concert in the cathedral next month.", "b_orch", facts=["b_music"]),
      A("Double bass in a cathedral, that'll sound enormous.")]],
    # 10: both learn sign language; B's car; B's trip
    [[A("I've started an evening course in British Sign Language. Two of the cast are deaf and "
        "I want to talk to them properly.", "a_bsl"),
      B("I'm learning sign language too! A couple of our farmers are deaf and I'm tired of "
        "writing notes on clipboards.", "b_bsl")],
     [B("The Land Rover failed its MOT again. It's held together by baler twine.", "b_car1",
        facts=["b_car"]),
      A("That thing is older than both of us.")],
     [B("For our anniversary {b_wife} and I are going to {b_trip1} in the new year.", "b_trip1",
        facts=["b_trip"]),
      A("Oh, lovely. Somewhere warm, I hope.")]],
    # 11: A's hives (change); A's wallet; B's goat (this morning)
    [[A("I split the strongest colony, so it's three hives on the allotment now.", "a_hives2",
        kind="change", facts=["a_hives"]),
      B("An empire of bees.")],
     [A("I left my wallet on the tram {when}. Someone handed it in with a note saying nice "
        "library card.", "a_wallet", when="last_weekday"),
      B("People are good sometimes.")],
     [B("I operated on a goat {when} that had eaten a glove. A whole glove. She's fine.",
        "b_goat", when="today"),
      A("Whose glove?"),
      B("The farmer's. He wants it back.")]],
    # 12: A's new job (change, start this <weekday>); B's interview (yesterday)
    [[A("Big news: I got the job at {a_radio}. Live sound for the breakfast show, no more "
        "midnight get-outs.", "a_job2", kind="change", facts=["a_job"]),
      B("Breakfast show means four a.m. alarms, you know that?"),
      A("I start {when}. I'm already scared of the alarm.", "a_start", when="this_weekday")],
     [B("Speaking of jobs, I had an interview at {b_zoo} {when}.", "b_interview",
        when="yesterday"),
      B("Don't tell anyone yet."),
      A("My lips are sealed. Fingers crossed!")]],
    # 13: B's new job (change); B's notice; A's move (change)
    [[B("I got it! I'm going to be a vet at {b_zoo}. Giraffes instead of cows!", "b_job2",
        kind="change", facts=["b_job"]),
      A("GIRAFFES. I'm so happy for you."),
      B("I handed in my notice at the practice {when}. Six years of mud, done.", "b_notice",
        when="today")],
     [A("The radio station is in {a_city2}, so I'm leaving the boat and moving to {a_city2}.",
        "a_move", kind="change", facts=["a_home"]),
      B("The end of the narrowboat era! How do you feel?"),
      A("Like a sailor retiring from the sea, except the sea was a canal.")]],
    # 14: A's moving day; B's new van (change)
    [[A("Moving day was {when}. The new flat in {a_city2} doesn't rock when a barge goes past, "
        "which feels wrong.", "a_moveday", kind="change", facts=["a_home"], when="last_weekday"),
      A("And I sold the narrowboat to a retired couple from Wales.", "a_boat_sold",
        kind="change", facts=["a_home"]),
      B("They'll love it. Did the stove come with it?")],
     [B("Traded the Land Rover for an electric van {when}. It's so quiet the sheep don't hear me "
        "coming.", "b_car2", kind="change", facts=["b_car"], when="last_weekday"),
      A("A silent vet van. Terrifying for sheep.")]],
    # 15: A's chess club (change); B's fortieth (this <weekday>); A's trip (change)
    [[A("New city, new chess club: this one meets on Monday nights in the central library.",
        "a_chess2", kind="change", facts=["a_chess"]),
      B("Libraries are quieter than pubs at least.")],
     [B("My fortieth is {when}. {b_wife} is throwing a ceilidh in the village hall.", "b_bday",
        when="this_weekday"),
      A("Forty! I'll bring my dancing boot.")],
     [A("Change of plan: {a_trip1} is off, the new job only gives me ten days, so I'm going to "
        "{a_trip2} instead.", "a_trip2", kind="change", facts=["a_trip"]),
      B("Ten days in {a_trip2} still sounds dreamy.")]],
    # 16: B's music (change); B's trip (change)
    [[B("I quit the orchestra. I'm playing bass in a ceilidh band now, we do weddings on "
        "Friday nights.", "b_music2", kind="change", facts=["b_music"]),
      A("From cathedral to ceilidh. Love it.")],
     [A("The orange bike is finally running right. New clutch, same noise."),
      B("Glad to hear it, it deserves a second life.")],
     [B("Our anniversary trip moved too: {b_trip1} was too far with the zoo job starting, so "
        "we're doing {b_trip2} instead.", "b_trip2", kind="change", facts=["b_trip"]),
      A("{b_trip2}! Take a big coat.")]],
    # 17: B started at the zoo; A's bees moved
    [[B("First week at {b_zoo} done. I vaccinated a red panda on day two.", "b_zoo_start",
        facts=["b_job"]),
      A("A red panda! Best first week ever.")],
     [A("The bees came with me: the three hives live on the radio station's roof now.",
        "a_bees_roof", facts=["a_hives"]),
      B("Radio bees. Do they get a jingle?")]],
    # 18: A's twin's rescue (the day before yesterday); B's horse
    [[A("{a_twin} landed the helicopter on a motorway {when} to get a crash victim out. It was "
        "on the news.", "a_twin_news", when="day_before_yesterday"),
      B("That's incredible. Your sister is a hero.")],
     [B("{b_horse} threw a shoe on the hill and I walked her home four miles."),
      B("My legs are still cross with me.")]],
    # 19: A's sign language exam (yesterday)
    [[A("I passed my sign language level one {when}!", "a_bsl_pass", when="yesterday"),
      B("Yes! I'm still stuck on the alphabet."),
      A("I'll teach you the rude ones.")]],
    # 20: B's first ceilidh wedding (relative date)
    [[B("The ceilidh band played its first wedding {when}. The groom fell over in the Gay "
        "Gordons.", "b_gig", when="last_weekday"),
      A("A classic ceilidh injury.")],
     [A("My gran's moved into a care home near {a_twin}, and she's already running the quiz "
        "night.", "a_gran_home"),
      B("Of course she is.")]],
    # 21: A's award (relative date)
    [[A("The breakfast show won a radio award {when}. I went on stage in a borrowed suit.",
        "a_award", when="last_weekday"),
      B("Look at you, award-winning sound man!")]],
    # 22: B's wife sold the vase
    [[B("News from the glass studio: {b_wife} finally sold the ugly vase! Two hundred pounds.",
        "b_vase"),
      A("Someone has terrible taste and I love them.")]],
]

FACTS_2P = {  # key: (whose, first value, changed to)
    "a_job": ("user", "sound engineer at {a_theatre}", "live sound for {a_radio}'s breakfast show"),
    "a_home": ("user", "a narrowboat on the canal in {a_city1}", "a flat in {a_city2}"),
    "a_hives": ("user", "two hives on the allotment", "three hives, now on the station's roof"),
    "a_honey": ("user", "{a_honey} jars", None),
    "a_trip": ("user", "{a_trip1}", "{a_trip2}"),
    "a_moto": ("user", "a 1978 {a_moto}, bought {date:a_moto}", None),
    "a_swim": ("user", "cold water swim at the lido, Saturday mornings", None),
    "a_chess": ("user", "pub chess club, Wednesday nights", "library chess club, Monday nights"),
    "a_twin": ("user", "{a_twin}, air ambulance pilot", None),
    "a_toe": ("user", "{date:a_toe}", None),
    "a_chilli": ("user", "scotch bonnets on the boat roof", None),
    "a_gran": ("user", "ninetieth on {date:a_gran}", None),
    "a_hometown": ("user", "{a_hometown}", None),
    "a_starter": ("user", "{a_starter}", None),
    "a_band": ("user", "{band} at the festival on {date:a_band}", None),
    "a_bsl": ("user", "British Sign Language evening course", None),
    "a_wallet": ("user", "{date:a_wallet}", None),
    "a_start": ("user", "{date:a_start}", None),
    "a_moveday": ("user", "{date:a_moveday}", None),
    "a_boat_sold": ("user", "sold to a retired couple from Wales", None),
    "a_bees_roof": ("user", "the radio station's roof", None),
    "a_twin_news": ("user", "{date:a_twin_news}", None),
    "a_bsl_pass": ("user", "{date:a_bsl_pass}", None),
    "a_award": ("user", "{date:a_award}", None),
    "a_gran_home": ("user", "a care home near {a_twin}", None),
    "a_move": ("user", "moving to {a_city2}", None),
    "a_job2": ("user", "{a_radio}", None),
    "a_hives2": ("user", "three hives", None),
    "a_chess1": ("user", "Wednesday", None),
    "a_chess2": ("user", "Monday", None),
    "a_trip1": ("user", "{a_trip1}", None),
    "a_trip2": ("user", "{a_trip2}", None),
    "a_job1": ("user", "{a_theatre}", None),
    "a_home1": ("user", "{a_city1}", None),
    "a_bees": ("user", "{a_honey} jars, two hives", None),
    "b_job": ("assistant", "farm vet at a mixed practice in the hills", "vet at {b_zoo}"),
    "b_horse": ("assistant", "{b_horse}, a grey Connemara mare", None),
    "b_wife": ("assistant", "{b_wife}, a glassblower", None),
    "b_stepson": ("assistant", "{b_stepson}, fifteen", None),
    "b_swim": ("assistant", "Saturday morning lake swimmers", None),
    "b_tattoo": ("assistant", "a {b_tattoo} on her ankle, {date:b_tattoo}", None),
    "b_robot": ("assistant", "{date:b_robot}", None),
    "b_chilli": ("assistant", "chillies in the polytunnel", None),
    "b_mum": ("assistant", "a bookshop in {b_mumtown}", None),
    "b_cert": ("assistant", "exotic animals certificate, {date:b_cert}", None),
    "b_band": ("assistant", "{band} at the arena", None),
    "b_music": ("assistant", "double bass, community orchestra, Thursdays",
                "bass in a ceilidh band, Friday weddings"),
    "b_bsl": ("assistant", "learning sign language", None),
    "b_car": ("assistant", "a Land Rover", "an electric van"),
    "b_trip": ("assistant", "{b_trip1}", "{b_trip2}"),
    "b_goat": ("assistant", "{date:b_goat}", None),
    "b_interview": ("assistant", "{date:b_interview}", None),
    "b_notice": ("assistant", "{date:b_notice}", None),
    "b_bday": ("assistant", "fortieth on {date:b_bday}", None),
    "b_zoo_start": ("assistant", "vaccinated a red panda", None),
    "b_gig": ("assistant", "{date:b_gig}", None),
    "b_vase": ("assistant", "two hundred pounds", None),
}

# Greetings and goodbyes: (opener's line, the other's line); {to} is the other one's name. Either
# of them may open or close a session.
OPENERS_2P = [
    ("Oi {to}! You alive?", "Barely. Tea first, then words."),
    ("Evening! Got a sec?", "For you, several."),
    ("{to}! It's been ages.", "I know, I'm the worst. How are you?"),
    ("Knock knock. Anyone home?", "Just about. Come in, mind the mess."),
    ("Hello from the sofa.", "Hello from the other sofa."),
    ("Right, I'm finally free. Catch-up?", "Yes please, I've got stories."),
    ("Hey {to}, quick one, or maybe a long one.", "Go on then, long one."),
    ("Good morning, sunshine.", "It's drizzling, but good morning."),
    ("Are you awake?", "Unfortunately."),
    ("Greetings from a very slow train.", "Ha, where are you off to?"),
    ("You free for a natter?", "Always. Kettle's on."),
    ("Hiya {to}. How's life treating you?", "Could be worse! You first."),
    ("Sorry for the radio silence.", "No apology needed, you're here now."),
    ("Hello you.", "Hello! I was just thinking about you."),
    ("Happy weekend!", "Happy weekend! Anything exciting?"),
    ("Ping!", "Pong. What's up?"),
    ("Ahoy!", "Ahoy yourself."),
    ("Good news and bad news, which first?", "Bad first, always."),
    ("Hey {to}! Got five minutes?", "I've got ten, lucky you."),
    ("Long week. Talk to me.", "Same here. You go first."),
    ("Morning! Coffee in hand?", "Second one already."),
    ("Hey stranger.", "Hey yourself, stranger."),
]
CLOSERS_2P = [
    ("Right, I'm off. Laters!", "Laters! Take care."),
    ("Gotta go, the kettle's screaming.", "Go rescue it. Bye!"),
    ("Speak next week?", "Definitely. Same time?"),
    ("Night night.", "Night! Sleep well."),
    ("I'll let you get on. Bye for now.", "Bye! Chat soon."),
    ("Okay, bed. Big day tomorrow.", "Good luck with it. Night."),
    ("That was nice. Let's do it again soon.", "Deal. Bye!"),
    ("Back to the grind. Cheerio.", "Cheerio!"),
    ("My bus is here, gotta dash!", "Dash away! Bye."),
    ("Okay, signing off. Love to everyone.", "Will pass it on. Bye!"),
    ("Talk soon, yeah?", "Yes! Soon."),
    ("Time to make dinner. Bye bye.", "Enjoy! Bye."),
    ("I should sleep. Thanks for the chat.", "Any time. Night!"),
    ("Off I go. Mind how you go.", "You too!"),
    ("Bye for now, I need a nap.", "Nap well!"),
    ("Right, duty calls. Later!", "Later!"),
    ("Okay, phone's dying. Bye!", "Charge it! Bye."),
    ("Until next time!", "Until next time."),
    ("I'll message you next week.", "Looking forward to it."),
    ("Catch you later.", "Catch you later!"),
    ("That's me done. Byeee.", "Byeee!"),
    ("Have a good one!", "You too!"),
]
# Small talk that states nothing a probe asks about, either of them first.
SMALL_2P = [
    ("The wind here is ridiculous today.", "Same, my bins are in the next street."),
    ("Have you tried that new crisp flavour?", "The pickle one? Crimes against crisps."),
    ("I keep forgetting what day it is.", "It's a Thursday kind of week."),
    ("Watched a documentary about octopuses last night.", "They're basically aliens."),
    ("My phone autocorrected my own name.", "Your phone doesn't trust you."),
    ("I need a new pair of boots.", "Get the sensible ones this time."),
    ("The clocks go back soon.", "Best and worst weekend of the year."),
    ("Have you had your flu jab yet?", "Booked for next week."),
    ("I ate a whole packet of biscuits for lunch.", "Balanced diet."),
    ("Why do socks vanish?", "They go to a better place."),
    ("There's a pigeon staring at me through the window.", "Stare back. Assert dominance."),
    ("Do you still do crosswords?", "Only the easy ones, on the bus."),
    ("I've got a song stuck in my head.", "Don't tell me which, it'll get stuck in mine."),
    ("It's actually sunny for once.", "Don't say it out loud, you'll scare it off."),
    ("I can't find my keys. Again.", "Check the fridge."),
    ("Did you see the moon last night?", "Huge and orange, wasn't it."),
    ("I tried a meditation app.", "And?"),
    ("My neighbour's cat has adopted me.", "Cats choose, we obey."),
    ("I really need a haircut.", "Embrace the chaos."),
    ("Is it wrong to put ketchup on everything?", "Not wrong, just brave."),
    ("I've started ironing my T-shirts.", "Who are you?"),
    ("The queue at the post office was out the door.", "Always is, somehow."),
    ("I'm trying to read more.", "Same. I bought books, that's step one."),
    ("Bought a plant for the kitchen.", "Give it a name so you feel guilty."),
    ("How is it only Tuesday?", "Time is fake this week."),
    ("I've been on hold for forty minutes.", "Put it on speaker and make toast."),
    ("Traffic was a nightmare.", "Was there a reason or just vibes?"),
    ("I made soup and it's mostly pepper.", "Soup is forgiving."),
    ("My back hurts from sitting wrong.", "Welcome to our thirties."),
    ("It's so dark in the mornings now.", "Winter's coming for us all."),
    ("Have you watched that baking show?", "Every week. I shout at the telly."),
    ("Found a fiver in my jeans.", "Today's a good day."),
    ("I really fancy chips.", "You always really fancy chips."),
    ("The smoke alarm went off while I made toast.", "Sounds like a normal breakfast."),
    ("I'm thinking of growing a beard.", "Do it. Commit."),
    ("Learned a new card game.", "Teach me next time, I'll lose gracefully."),
    ("My hands are freezing.", "Gloves exist, you know."),
    ("Got rained on twice today.", "The sky has it out for you."),
    ("I keep buying bananas and never eating them.", "Banana bread. Problem solved."),
    ("The shop had no bread at all.", "Panic buying or bad luck?"),
    ("I fell asleep on the sofa at eight.", "Peak living."),
    ("I think I'm addicted to podcasts.", "There are worse things."),
    ("My laptop is making a weird noise.", "That's its way of asking for retirement."),
    ("I can't decide what to have for tea.", "Beans on toast, always."),
    ("The kettle is broken, I'm in crisis.", "Saucepan! Pioneer days."),
]
# Two messages in a row from one of them, then the other's line.
DOUBLE_2P = [
    ("Ugh.", "Sorry, ignore that, wrong chat.", "Ha, I want to know what that was for."),
    ("Wait.", "Never mind, found it.", "Found what?"),
    ("Hang on, someone's at the door.", "Okay, back. Parcel for next door.", "The eternal parcel."),
    ("Haha.", "Sorry, I just remembered something silly from school.", "Tell me!"),
    ("Brb.", "Back. Where were we?", "Something about nothing, as usual."),
    ("Hmm.", "Actually, no, forget it.", "Now I'm curious."),
    ("Oh!", "Sorry, spilled tea everywhere.", "Classic."),
    ("One sec.", "Right, I'm here.", "Welcome back."),
]
# A short reaction right after one of them told something.
REACT_2P = [
    ("Honestly, that made my day.", "Glad to share it."),
    ("Wow. Just wow.", "I know."),
    ("That's so you.", "I'll take that as a compliment."),
    ("Stop, amazing.", "Right?"),
    ("I need to sit down after that.", "Ha, sorry."),
    ("Well, that's news.", "Big news, I'd say."),
    ("Love that.", "Me too."),
    ("No way.", "Way!"),
]

# (category, question, evidence labels, expects, answer, extra); expects are in the evidence text
P_2P = [
    # single-hop about A
    ("single-hop", "What does {A} do at {a_theatre}?", ["a_job1"], ["mixing sound"], "sound engineer", {}),
    ("single-hop", "What kind of home did {A} live in in {a_city1}?", ["a_home1"], ["narrowboat"],
     "a narrowboat", {}),
    ("single-hop", "How many jars of honey did {A}'s bees make in their first summer?", ["a_bees"],
     ["{a_honey} jars"], "{a_honey}", {}),
    ("single-hop", "What motorbike did {A} buy?", ["a_moto"], ["{a_moto}"], "a 1978 {a_moto}", {}),
    ("single-hop", "What colour is {A}'s motorbike?", ["a_moto"], ["orange"], "bright orange", {}),
    ("single-hop", "What does {A}'s twin sister do for work?", ["a_twin"], ["air ambulance", "helicopter"],
     "she flies the air ambulance helicopter", {}),
    ("single-hop", "Where does {A} swim on Saturday mornings?", ["a_swim"], ["lido"], "at the lido", {}),
    ("single-hop", "What does {A} grow on the boat roof?", ["a_chilli"], ["scotch bonnets"],
     "scotch bonnet chillies", {}),
    ("single-hop", "Where did {A} grow up?", ["a_hometown"], ["{a_hometown}"], "{a_hometown}", {}),
    ("single-hop", "What is {A}'s sourdough starter called?", ["a_starter"], ["{a_starter}"], "{a_starter}",
     {}),
    ("single-hop", "What did I call my sourdough starter?", ["a_starter"], ["{a_starter}"], "{a_starter}",
     {}),
    ("single-hop", "Why is {A} learning British Sign Language?", ["a_bsl"], ["deaf"],
     "two of the cast are deaf", {}),
    ("single-hop", "Where did {A} leave his wallet?", ["a_wallet"], ["tram"], "on the tram", {}),
    ("single-hop", "Who bought {A}'s narrowboat?", ["a_boat_sold"], ["retired couple"],
     "a retired couple from Wales", {}),
    ("single-hop", "How did {A} break his toe?", ["a_toe"], ["speaker stack"],
     "he dropped a speaker stack on his foot", {}),
    ("single-hop", "What did {A} wear to go on stage at the radio award?", ["a_award"], ["borrowed suit"],
     "a borrowed suit", {}),
    ("single-hop", "How many relatives came to {A}'s gran's ninetieth?", ["a_gran"], ["Forty"], "forty", {}),
    # single-hop about B
    ("single-hop", "What is the name of {B}'s horse?", ["b_horse"], ["{b_horse}"], "{b_horse}", {}),
    ("single-hop", "What breed is {B}'s horse?", ["b_horse"], ["Connemara"], "a grey Connemara mare", {}),
    ("single-hop", "What is your horse called?", ["b_horse"], ["{b_horse}"], "{b_horse}", {}),
    ("single-hop", "What does {B}'s wife make?", ["b_wife", "b_wife_job"], ["glass"],
     "glass: bowls, lamps, vases", {}),
    ("single-hop", "What is the name of {B}'s wife?", ["b_wife"], ["{b_wife}"], "{b_wife}", {}),
    ("single-hop", "How old is {B}'s stepson?", ["b_stepson"], ["Fifteen"], "fifteen", {}),
    ("single-hop", "What tattoo did {B} get?", ["b_tattoo"], ["{b_tattoo}", "ankle"],
     "a little {b_tattoo} on her ankle", {}),
    ("single-hop", "What did {B}'s stepson's robot do?", ["b_robot"], ["sorts recycling"],
     "it sorts recycling", {}),
    ("single-hop", "Where does {B}'s mum run her bookshop?", ["b_mum"], ["{b_mumtown}"], "{b_mumtown}", {}),
    ("single-hop", "What certificate did {B} pass?", ["b_cert"], ["exotic animals"],
     "an exotic animals certificate", {}),
    ("single-hop", "What had the goat {B} operated on eaten?", ["b_goat"], ["glove"], "a glove", {}),
    ("single-hop", "What animal did {B} vaccinate in her first week at the zoo?", ["b_zoo_start"],
     ["red panda"], "a red panda", {}),
    ("single-hop", "How much did {B}'s wife sell the ugly vase for?", ["b_vase"], ["Two hundred pounds"],
     "two hundred pounds", {}),
    ("single-hop", "Where is {B}'s fortieth birthday party?", ["b_bday"], ["ceilidh", "village hall"],
     "a ceilidh in the village hall", {}),
    # multi-hop: both of them (one line each), and facts from several places
    ("multi-hop", "What do {A} and {B} both do on Saturday mornings?", ["a_swim", "b_swim"], ["swim"],
     "cold water swimming (the lido and the lake)", {}),
    ("multi-hop", "What do {A} and {B} both grow?", ["a_chilli", "b_chilli"], ["chilli"], "chillies", {}),
    ("multi-hop", "Which band have {A} and {B} both seen live?", ["a_band", "b_band"], ["{band}"], "{band}",
     {}),
    ("multi-hop", "What language are {A} and {B} both learning?", ["a_bsl", "b_bsl"], ["sign language"],
     "British Sign Language", {}),
    ("single-hop", "Which of {A} and {B} has a horse, and what is it called?", ["b_horse"], ["{b_horse}"],
     "{B}: {b_horse}", {}),
    ("multi-hop", "Where do {A}'s bees live now?", ["a_hives2", "a_bees_roof"], ["three hives", "roof"],
     "three hives on the radio station's roof", {}),
    ("multi-hop", "In which city is the radio station {A} works for?", ["a_job2", "a_move"],
     ["{a_radio}", "{a_city2}"], "{a_city2}", {}),
    ("multi-hop", "What does the relative {A}'s gran moved near do for work?", ["a_gran_home", "a_twin"],
     ["{a_twin}", "air ambulance"], "{a_twin}, his twin, flies the air ambulance helicopter", {}),
    ("multi-hop", "Who is throwing {B}'s fortieth party, and what does she do for a living?",
     ["b_bday", "b_wife_job"], ["{b_wife}", "glass"], "{b_wife}, a glassblower", {}),
    ("multi-hop", "What instrument did {B} play in the orchestra, and what band does she play it in now?",
     ["b_orch", "b_music2"], ["double bass", "ceilidh band"], "double bass; a ceilidh band", {}),
    ("multi-hop", "Which two jobs has {A} had?", ["a_job1", "a_job2"], ["{a_theatre}", "{a_radio}"],
     "sound at {a_theatre}, then live sound at {a_radio}", {}),
    ("multi-hop", "Which two places has {B} worked as a vet?", ["b_job1b", "b_job2"],
     ["mixed practice", "{b_zoo}"], "a mixed practice in the hills, then {b_zoo}", {}),
    ("multi-hop", "What did {A}'s twin do that made the news?", ["a_twin", "a_twin_news"],
     ["helicopter", "motorway"], "landed the air ambulance helicopter on a motorway", {}),
    ("multi-hop", "What does {B} grow that her mum wants, and where is her mum's bookshop?",
     ["b_chilli", "b_mum"], ["chillies", "{b_mumtown}"], "chillies; {b_mumtown}", {}),
    # temporal
    ("temporal", "When did {A} buy his motorbike?", ["a_moto"], ["bought the motorbike", "{when:a_moto}"],
     "{date:a_moto}", {"date": "a_moto"}),
    ("temporal", "When did {B} get her tattoo?", ["b_tattoo"], ["tattoo", "{when:b_tattoo}"],
     "{date:b_tattoo}", {"date": "b_tattoo"}),
    ("temporal", "When did {A} break his toe?", ["a_toe"], ["broke my toe", "{when:a_toe}"], "{date:a_toe}",
     {"date": "a_toe"}),
    ("temporal", "When did {B}'s stepson win the robotics competition?", ["b_robot"],
     ["robotics", "{when:b_robot}"], "{date:b_robot}", {"date": "b_robot"}),
    ("temporal", "When was {A}'s gran's ninetieth birthday party?", ["a_gran"],
     ["ninetieth", "{when:a_gran}"], "{date:a_gran}", {"date": "a_gran"}),
    ("temporal", "When did {B} pass her exotic animals certificate?", ["b_cert"],
     ["exotic animals", "{when:b_cert}"], "{date:b_cert}", {"date": "b_cert"}),
    ("temporal", "When did {A} see {band} at the festival?", ["a_band"], ["festival", "{when:a_band}"],
     "{date:a_band}", {"date": "a_band"}),
    ("temporal", "When did {A} lose his wallet on the tram?", ["a_wallet"], ["wallet", "{when:a_wallet}"],
     "{date:a_wallet}", {"date": "a_wallet"}),
    ("temporal", "When did {B} operate on the goat that ate a glove?", ["b_goat"], ["goat", "{when:b_goat}"],
     "{date:b_goat}", {"date": "b_goat"}),
    ("temporal", "When did {A} start at {a_radio}?", ["a_start"], ["I start", "{when:a_start}"],
     "{date:a_start}", {"date": "a_start"}),
    ("temporal", "When was {B}'s interview at {b_zoo}?", ["b_interview"], ["interview", "{when:b_interview}"],
     "{date:b_interview}", {"date": "b_interview"}),
    ("temporal", "When did {B} hand in her notice at the practice?", ["b_notice"],
     ["notice", "{when:b_notice}"], "{date:b_notice}", {"date": "b_notice"}),
    ("temporal", "When did I move into the flat in {a_city2}?", ["a_moveday"],
     ["Moving day", "{when:a_moveday}"], "{date:a_moveday}", {"date": "a_moveday"}),
    ("temporal", "When did {B} get her electric van?", ["b_car2"], ["electric van", "{when:b_car2}"],
     "{date:b_car2}", {"date": "b_car2"}),
    ("temporal", "When is {B}'s fortieth birthday?", ["b_bday"], ["fortieth", "{when:b_bday}"],
     "{date:b_bday}", {"date": "b_bday"}),
    ("temporal", "When did {A}'s twin land the helicopter on the motorway?", ["a_twin_news"],
     ["motorway", "{when:a_twin_news}"], "{date:a_twin_news}", {"date": "a_twin_news"}),
    ("temporal", "When did {A} pass his sign language level one?", ["a_bsl_pass"],
     ["level one", "{when:a_bsl_pass}"], "{date:a_bsl_pass}", {"date": "a_bsl_pass"}),
    ("temporal", "When did {B}'s ceilidh band play its first wedding?", ["b_gig"],
     ["first wedding", "{when:b_gig}"], "{date:b_gig}", {"date": "b_gig"}),
    ("temporal", "When did {A}'s breakfast show win a radio award?", ["a_award"],
     ["radio award", "{when:a_award}"], "{date:a_award}", {"date": "a_award"}),
    # updated facts
    ("updated-fact", "Where does {A} live now?", ["a_move", "a_moveday"], ["{a_city2}"],
     "a flat in {a_city2}", {"outdated": ["{a_city1}", "narrowboat"], "superseded": ["a_home1"]}),
    ("updated-fact", "Does {A} still live on the narrowboat?", ["a_boat_sold"], ["sold the narrowboat"],
     "no, he sold it", {"outdated": ["Still on the narrowboat"], "superseded": ["a_home1"]}),
    ("updated-fact", "What is {A}'s job now?", ["a_job2"], ["{a_radio}", "breakfast show"],
     "live sound for {a_radio}'s breakfast show", {"outdated": ["{a_theatre}"], "superseded": ["a_job1"]}),
    ("updated-fact", "How many beehives does {A} have now?", ["a_hives2"], ["three hives"], "three",
     {"outdated": ["Two hives"], "superseded": ["a_bees"]}),
    ("updated-fact", "Which night does {A}'s chess club meet now?", ["a_chess2"], ["Monday nights"],
     "Monday nights", {"outdated": ["Wednesday"], "superseded": ["a_chess1"]}),
    ("updated-fact", "Where is {A} going on his big walking trip?", ["a_trip2"], ["{a_trip2}"], "{a_trip2}",
     {"outdated": ["{a_trip1}"], "superseded": ["a_trip1"]}),
    ("updated-fact", "Where am I going on holiday?", ["a_trip2"], ["{a_trip2}"], "{a_trip2}",
     {"outdated": ["{a_trip1}"], "superseded": ["a_trip1"]}),
    ("updated-fact", "Where does {B} work now?", ["b_job2"], ["{b_zoo}"], "{b_zoo}",
     {"outdated": ["mixed practice"], "superseded": ["b_job1", "b_job1b"]}),
    ("updated-fact", "Is {B} still a farm vet?", ["b_job2"], ["{b_zoo}"], "no, she is a vet at {b_zoo}",
     {"outdated": ["calving season"], "superseded": ["b_job1"]}),
    ("updated-fact", "What does {B} drive now?", ["b_car2"], ["electric van"], "an electric van",
     {"outdated": ["Land Rover"], "superseded": ["b_car1"]}),
    ("updated-fact", "What do you drive these days?", ["b_car2"], ["electric van"], "an electric van",
     {"outdated": ["Land Rover"], "superseded": ["b_car1"]}),
    ("updated-fact", "Does {B} still play in the community orchestra?", ["b_music2"],
     ["quit the orchestra", "ceilidh band"], "no, she plays bass in a ceilidh band",
     {"outdated": ["community orchestra"], "superseded": ["b_orch"]}),
    ("updated-fact", "Where are {B} and {b_wife} going for their anniversary?", ["b_trip2"], ["{b_trip2}"],
     "{b_trip2}", {"outdated": ["{b_trip1}"], "superseded": ["b_trip1"]}),
    ("updated-fact", "Where are you going for your anniversary?", ["b_trip2"], ["{b_trip2}"], "{b_trip2}",
     {"outdated": ["{b_trip1}"], "superseded": ["b_trip1"]}),
    # unanswerable, each with a tempting near-miss
    ("unanswerable", "What is {A}'s horse called?", [], [], None,
     {"tempting": ["{b_horse}"], "about": "user"}),
    ("unanswerable", "What instrument does {A} play?", [], [], None,
     {"tempting": ["double bass"], "about": "user"}),
    ("unanswerable", "What is {B}'s sourdough starter called?", [], [], None,
     {"tempting": ["{a_starter}"], "about": "assistant"}),
    ("unanswerable", "How many beehives does {B} keep?", [], [], None,
     {"tempting": ["three hives"], "about": "assistant"}),
    ("unanswerable", "What is the name of {A}'s wife?", [], [], None,
     {"tempting": ["{b_wife}"], "about": "user"}),
    ("unanswerable", "Where did {B} grow up?", [], [], None,
     {"tempting": ["{a_hometown}", "{b_mumtown}"], "about": "assistant"}),
    ("unanswerable", "What tattoo does {A} have?", [], [], None,
     {"tempting": ["{b_tattoo}"], "about": "user"}),
    ("unanswerable", "What colour is {B}'s motorbike?", [], [], None,
     {"tempting": ["orange"], "about": "assistant"}),
    ("unanswerable", "When is {A}'s birthday?", [], [], None,
     {"tempting": ["fortieth", "ninetieth"], "about": "user"}),
    ("unanswerable", "What is the name of {A}'s twin's helicopter base?", [], [], None,
     {"tempting": ["city hospital"], "about": "user"}),
    ("unanswerable", "Which zoo did {A} apply to?", [], [], None, {"tempting": ["{b_zoo}"], "about": "user"}),
    ("unanswerable", "What does {B}'s stepson want to be when he grows up?", [], [], None,
     {"tempting": ["robotics"], "about": "assistant"}),
    ("unanswerable", "What is {A}'s chess rating?", [], [], None,
     {"tempting": ["Wednesday nights", "Monday nights"], "about": "user"}),
    ("unanswerable", "What is the name of {B}'s mum's bookshop?", [], [], None,
     {"tempting": ["{b_mumtown}"], "about": "assistant"}),
    ("unanswerable", "How much honey did {B} get this year?", [], [], None,
     {"tempting": ["{a_honey} jars"], "about": "assistant"}),
    ("unanswerable", "What is the name of the musical {A} worked on at {a_theatre}?", [], [], None,
     {"tempting": ["forty radio mics"], "about": "user"}),
    ("unanswerable", "Which radio award did {B} win?", [], [], None,
     {"tempting": ["radio award"], "about": "assistant"}),
]

LINES_PER_SESSION_2P = 28  # greeting and goodbye included
SPEAKER = {"A": "user", "B": "assistant"}


def generate_two_person(seed: int = 7) -> dict:
    """Build ``heldout_two_person`` (format: data/evaluation/README.md)."""
    rng = random.Random(seed)
    values = pick_values_2p(rng)
    name = {"A": values["A"], "B": values["B"]}
    other = {"A": "B", "B": "A"}
    dates = session_dates(rng, dt.date(2025, 9, 1), len(STORY_2P))
    # at least a third of the sessions open with B (speaker "assistant"), seeded which
    b_opens = set(rng.sample(range(len(STORY_2P)), round(0.4 * len(STORY_2P))))
    openers = rng.sample(OPENERS_2P, len(STORY_2P))
    closers = rng.sample(CLOSERS_2P, len(STORY_2P))
    cycles = {"small": rng.sample(SMALL_2P, len(SMALL_2P)),
              "double": rng.sample(DOUBLE_2P, len(DOUBLE_2P)),
              "react": rng.sample(REACT_2P, len(REACT_2P))}
    used = dict.fromkeys(cycles, 0)

    def take(pool):
        item = cycles[pool][used[pool] % len(cycles[pool])]
        used[pool] += 1
        return item

    turns: list[dict] = []
    labels: dict[str, str] = {}
    events: dict[str, tuple[str, dt.date]] = {}
    session = [0]

    def add(speaker: str, text: str, kind: str, facts) -> str:
        turn_id = f"t{len(turns) + 1:03d}"
        day = dates[session[0] - 1]
        turns.append({"id": turn_id, "session_id": f"session-{session[0]}",
                      "date": day.isoformat(), "speaker": speaker, "text": text, "kind": kind,
                      "facts": list(facts)})
        return turn_id

    def pair(first: str, texts) -> list[dict]:
        return [line(first if i < len(texts) - 1 else other[first],
                     t.replace("{to}", name[other[first]])) for i, t in enumerate(texts)]

    for number, blocks in enumerate(STORY_2P, start=1):
        session[0] = number
        day = dates[number - 1]
        story = sum(len(b) for b in blocks)
        room = LINES_PER_SESSION_2P - 4 - story
        assert room >= 2, (number, story)
        fillers = ["double"] if room % 2 else []
        fillers += ["pair"] * ((room - 3 * len(fillers)) // 2)
        order = len(blocks) + len(fillers)
        slots = sorted(rng.sample(range(order), len(blocks)))
        if number == 1:  # the first catch-up starts with the news
            slots = [0, *sorted(rng.sample(range(1, order), len(blocks) - 1))]
        mixed: list = [None] * order
        for slot, block in zip(slots, blocks, strict=True):
            mixed[slot] = block
        kinds = iter(rng.sample(fillers, len(fillers)))
        for i in range(order):
            if mixed[i] is not None:
                continue
            kind = next(kinds)
            before = mixed[i - 1] if i else None
            last = before[-1]["who"] if before else ("B" if number - 1 in b_opens else "A")
            # mostly the one who did not speak last starts the next topic; now and then the
            # same one goes on (two messages in a row)
            starter = other[last] if rng.random() < 0.75 else last
            if kind == "double":
                mixed[i] = pair(starter, take("double"))
            elif before is not None and any(before is b for b in blocks) and rng.random() < 0.5:
                mixed[i] = pair(other[last], take("react"))
            else:
                mixed[i] = pair(starter, take("small"))
        first = "B" if number - 1 in b_opens else "A"
        hello = pair(first, openers[number - 1])
        bye = pair(rng.choice("AB"), closers[number - 1])
        for block in [hello, *mixed, bye]:
            for ln in block:
                text = ln["text"]
                if ln["when"]:
                    phrase, when = resolve_when(ln["when"], day, rng)
                    events[ln["label"]] = (phrase, when)
                    text = text.replace("{when}", phrase)
                turn_id = add(SPEAKER[ln["who"]], fill(text, values), ln["kind"], ln["facts"])
                if ln["label"]:
                    labels[ln["label"]] = turn_id

    session[0] = len(STORY_2P) + 1
    speaker_of = {t["id"]: t["speaker"] for t in turns}
    names = [values["A"], values["B"]]
    probes = build_probes(rng, P_2P, values, events, labels, speaker_of,
                          lambda q: add("user", q, "probe", ()), lambda q: person(q, names))
    history = [t for t in turns if t["kind"] != "probe"]
    counts = {c: sum(p["category"] == c for p in probes) for c in CATEGORIES}
    sessions = [{"id": f"session-{i}", "date": d.isoformat(), "weekday": WEEKDAYS[d.weekday()]}
                for i, d in enumerate(dates, start=1)]
    data = {
        "id": "heldout_two_person",
        "held_out": True,
        "seed": seed,
        "language": "en",
        "user_id": values["A"].lower(),
        "description": (
            f"{HELD_OUT_NOTE} {len(history)} lines of two old friends, {values['A']} (user) and "
            f"{values['B']} (assistant), over {len(STORY_2P)} dated sessions (either may open "
            f"one or send two messages in a row), then {len(probes)} probe questions in session "
            f"{len(STORY_2P) + 1}: " + ", ".join(f"{n} {c}" for c, n in counts.items())
            + ". Both state facts about themselves in passing, split over two messages, with "
            "relative dates, some changed later; probes mostly by name, some about both."),
        "system": (f"The chat below is between two friends: the user's messages are "
                   f"{values['A']}'s, the assistant's are {values['B']}'s. Answer questions "
                   "about either of them briefly, from the chat; if it was never said, say you "
                   "don't know."),
        "speakers": {"user": values["A"], "assistant": values["B"]},
        "sessions": sessions,
        "facts": {key: {"speaker": who, "value": fill(value, values, events),
                        "changed_to": fill(changed, values, events) if changed else None}
                  for key, (who, value, changed) in FACTS_2P.items()},
        "values": values,
        "turns": turns,
        "probes": probes,
    }
    self_check(data, min_lines=600, min_sessions=20, probes=(80, 120))
    return data


# ===============================================================================================
# 2. heldout_assistant: a user and an AI assistant whose replies read like a real model's
# ===============================================================================================

POOLS_AS = {
    "U": ["Anouk", "Wren", "Kasia", "Ines"],
    "hospital": ["St Brigid's", "the Royal Infirmary", "Westfield General"],
    "city1": ["Leicester", "Bath", "York"],
    "city2": ["Dundee", "Aberystwyth", "Inverness"],
    "tortoise": ["Horace", "Tilly", "Admiral"],
    "partner": ["Jonah", "Felix", "Arlo"],
    "sister": ["Clementine", "Odette", "Rosalind"],
    "venue": ["a barn in the Cotswolds", "a lighthouse in Norfolk", "a castle in Fife"],
    "hike": [("the Dolomites", "the Pyrenees"), ("the Tatras", "the Julian Alps"),
             ("Corsica", "the Picos de Europa")],
    "nephew": ["Otto", "Bram", "Fritz"],
    "age": ["33", "34", "35"],
}


def pick_values_as(rng: random.Random) -> dict[str, str]:
    v = {k: rng.choice(pool) for k, pool in POOLS_AS.items()}
    v["trip1"], v["trip2"] = v.pop("hike")
    return v


def X(u, label=None, kind="fact", facts=None, when=None, echo="", core="", mood="neutral"):  # noqa: N802
    """One exchange: the user's line ``u`` and how the assistant's reply is made: ``echo`` (it
    restates what the user said), ``core`` (the answer to what was asked), ``mood`` (which
    acknowledgement opens it). Without a label the user's line is a request (kind "filler")."""
    unlabelled = "question" if kind == "question" else "filler"
    return {"u": u, "label": label, "kind": kind if label else unlabelled,
            "facts": list(facts) if facts is not None else ([label] if label else []),
            "when": when, "echo": echo, "core": core, "mood": mood}


def Q(u, core):  # noqa: N802 - the user asks about her own topic; states nothing new
    return X(u, kind="question", core=core)


STORY_AS = [
    # 1: job, city and commute
    [[X("I'm a pharmacist at {hospital}, mostly on the cancer wards, and today I need help writing "
        "a polite email to a consultant who keeps ignoring my messages.", "u_job1",
        facts=["u_job"],
        echo="It sounds like being a hospital pharmacist at {hospital}, working on the cancer "
             "wards, means a lot of chasing very busy consultants.",
        core="Here's a short draft you could adapt:\n\n\"Dear Dr ___, I wanted to follow up on "
             "my message about the dosing for bed 12. Could we have five minutes today? I want "
             "to make sure the patient gets the right dose before the next round. Many "
             "thanks.\"\n\nKeeping it short, specific and focused on the patient usually gets "
             "a faster answer.")],
     [X("I live in {city1} and cycle to the hospital along the river, about twenty minutes each "
        "way.", "u_commute1", facts=["u_city", "u_commute"],
        echo="Cycling along the river in {city1} for twenty minutes each way sounds like a "
             "lovely way to bookend a hospital shift.", mood="good"),
      Q("What should I keep in my bike bag for winter?",
        "For winter commuting I'd suggest lights front and back (plus a spare set), a "
        "waterproof jacket, gloves, a small pump and puncture kit, and a high-visibility layer.")]],
    # 2: the tortoise (split over two user lines), harp lessons
    [[X("My grandad died in the spring and I inherited his tortoise.", "u_tortoise1",
        facts=["u_tortoise"],
        echo="I'm so sorry about your grandad. Taking in the tortoise he cared for is a "
             "beautiful way to keep a bit of him close.", mood="sad"),
      X("He's called {tortoise} and he's forty-three, older than me! What should I feed him?",
        "u_tortoise2", facts=["u_tortoise"],
        echo="{tortoise} sounds like quite a character, and forty-three is a wonderful age for "
             "a tortoise.",
        core="Most pet tortoises do best on a diet of mostly leafy weeds and greens: dandelion, "
             "plantain, clover and some rocket, with only occasional fruit. A cuttlefish bone "
             "gives calcium, and fresh water should always be available. It's worth checking "
             "the exact species with a reptile vet, since needs vary.")],
     [X("I've started harp lessons on Tuesday evenings. It's so much harder than it looks.",
        "u_harp1", facts=["u_harp"],
        echo="Harp lessons on Tuesday evenings sound lovely. It's completely normal for the "
             "harp to feel hard at first; your fingers are learning a whole new language.",
        mood="good")]],
    # 3: coeliac (relative date), partner
    [[X("I was diagnosed coeliac {when}, so no more gluten. Can you suggest some breakfasts?",
        "u_coeliac", when="last_weekday",
        echo="Being diagnosed coeliac is a big adjustment, and it's great that you're already "
             "thinking about practical meals.",
        core="Some gluten-free breakfast ideas:\n\n1. Porridge made with certified "
             "gluten-free oats\n2. Eggs any way, with roasted tomatoes\n3. Greek yoghurt with "
             "berries and seeds\n4. Buckwheat pancakes\n5. Rice cakes with nut butter and "
             "banana\n\nDo check labels, as cross-contamination is common.", mood="sad")],
     [X("My partner {partner} is a firefighter on four-day shifts, so I end up cooking for one "
        "a lot.", "u_partner",
        echo="It sounds like {partner}'s firefighter shifts leave you on your own for chunks of "
             "the week, which can make cooking feel like a chore.",
        core="Batch cooking a couple of freezable dishes on a day off, like a chilli or a "
             "lentil soup, can make those solo evenings much easier."),
      Q("Can you give me a gluten-free recipe that freezes well?",
        "A simple one is a sweet potato and chickpea curry: onion, garlic, ginger, curry paste "
        "(check it's gluten free), sweet potato, chickpeas, a tin of coconut milk and spinach. "
        "Simmer for twenty-five minutes and freeze in portions.")]],
    # 4: kitchen (relative date), rowing
    [[X("The builders started on our kitchen {when}. We're living on a microwave and a kettle.",
        "u_kitchen", when="last_weekday",
        echo="Living on a microwave and a kettle while the builders work on your kitchen is "
             "tough, but it's temporary.", mood="sad")],
     [X("I row with a club on Sunday mornings, out on the river at seven.", "u_rowing1",
        facts=["u_rowing"],
        echo="Rowing on the river at seven on a Sunday morning takes real dedication!",
        mood="good"),
      Q("How can I stop getting blisters from rowing?",
        "Blisters are very common for rowers. Loosening your grip, keeping your hands dry, "
        "taping hot spots before a session and letting calluses form gradually usually help.")]],
    # 5: exam (this <weekday>), sister's wedding
    [[X("I'm sitting my independent prescribing exam {when} and I'm starting to panic.",
        "u_exam", when="this_weekday",
        echo="It's completely understandable to feel nervous with your prescribing exam so "
             "close.",
        core="A simple plan for the last few days:\n\n1. Do one timed practice paper a day\n2. "
             "Review only your weakest topics\n3. Sleep at least seven hours\n4. Prepare "
             "everything you need the night before", mood="sad")],
     [X("My sister {sister} is getting married at {venue} next summer, and I'm her maid of "
        "honour.", "u_sister",
        echo="Congratulations to {sister}! Being maid of honour at a wedding at {venue} sounds "
             "like a real honour.", mood="good"),
      Q("What does a maid of honour actually have to do?",
        "Traditionally a maid of honour helps the bride with planning, organises the hen do, "
        "supports her on the day, and sometimes gives a short speech.")]],
    # 6: exam passed (yesterday), wasp allergy
    [[X("I passed the prescribing exam! The results came {when}.", "u_exam_pass",
        when="yesterday",
        echo="Congratulations on passing your prescribing exam! All that revision paid off.",
        mood="good")],
     [X("I'm allergic to wasp stings and carry an adrenaline pen, which makes summer picnics a "
        "bit stressful.", "u_wasp",
        echo="Carrying an adrenaline pen because of a wasp sting allergy is sensible, and it "
             "makes sense that picnics feel stressful.",
        core="Covering sweet drinks, avoiding strong perfumes, choosing shaded spots away from "
             "bins, and making sure your friends know where the pen is can all help.")]],
    # 7: hiking trip, children's book
    [[X("{partner} and I are planning to hike in {trip1} next September.", "u_trip1",
        facts=["u_trip"],
        echo="Hiking in {trip1} with {partner} next September sounds wonderful.",
        core="September is often a great time for mountain walking: fewer crowds, cooler "
             "temperatures. Booking huts early and building up to longer walks beforehand is "
             "a good idea.", mood="good"),
      Q("What boots would you recommend for a long hike?",
        "For multi-day hiking I'd look at a mid-height, waterproof boot with a stiff sole, and "
        "break them in over several weeks before the trip.")],
     [X("I'm writing a children's book about a tortoise who wants to fly. It's based on "
        "{tortoise}, obviously.", "u_book1", facts=["u_book"],
        echo="A children's book about a tortoise who wants to fly, inspired by {tortoise}, is "
             "such a charming idea!", mood="good")]],
    # 8: birthday (yesterday), nephew
    [[X("I turned {age} {when}. {partner} made a gluten-free cake that collapsed but tasted "
        "great.", "u_bday", when="yesterday",
        echo="Happy belated birthday! Turning {age} with a homemade gluten-free cake from "
             "{partner}, collapsed or not, sounds lovely.", mood="good")],
     [X("My nephew {nephew} is four and obsessed with diggers. He's my sister's little boy.",
        "u_nephew",
        echo="{nephew} sounds adorable; four is exactly the age for a digger obsession.",
        core="If you're looking for gift ideas, a sturdy toy excavator, a digger picture book "
             "or a visit to a construction viewing spot are usually big hits.")]],
    # 9: new job and move (changes)
    [[X("Big decision: I've accepted a job teaching pharmacology at the university in {city2}.",
        "u_job2", kind="change", facts=["u_job"],
        echo="Congratulations! I remember you said you work as a pharmacist at {hospital}, so "
             "teaching pharmacology at a university is a big and exciting change.", mood="good"),
      X("So we're moving to {city2} in the new year.", "u_move", kind="change",
        facts=["u_city"],
        echo="Moving from {city1} to {city2} is a big step.",
        core="A moving checklist:\n\n1. Book the removal firm early\n2. Redirect your post\n3. "
             "Register with a new GP\n4. Update your address with your bank and employer")]],
    # 10: harp lessons move (change), kitchen finished
    [[X("My harp teacher has moved my lessons to Friday afternoons.", "u_harp2",
        kind="change", facts=["u_harp"],
        echo="I remember you said your harp lessons were on Tuesday evenings, so Friday "
             "afternoons will be quite a change to your week.")],
     [X("The kitchen was finally finished {when}! Six weeks late, but it's beautiful.",
        "u_kitchen_done", when="day_before_yesterday",
        echo="I'm so glad the kitchen is finished! Six weeks late is frustrating, but it "
             "sounds like it was worth the wait.", mood="good")]],
    # 11: hike changes (change), last day at the hospital (this morning)
    [[X("Change of plan for the hike: {trip1} is fully booked, so we're going to {trip2} "
        "instead.", "u_trip2", kind="change", facts=["u_trip"],
        echo="I remember you were planning {trip1}; it's a shame it was booked up, but {trip2} "
             "is a fantastic alternative.")],
     [X("It was my last day at {hospital} {when}. The ward gave me a card signed by forty "
        "people.", "u_lastday", when="today",
        echo="A card signed by forty people on your last day at {hospital} says a lot about "
             "how much your colleagues valued you.", mood="good")]],
    # 12: moving day (relative date, change), commute (change)
    [[X("We moved into the new place in {city2} {when}. There are boxes everywhere.",
        "u_moveday", kind="change", facts=["u_city"], when="last_weekday",
        echo="Congratulations on moving into your new place in {city2}! Boxes everywhere is a "
             "rite of passage.", mood="good")],
     [X("The university is too far to cycle, so I take the train to work now.", "u_commute2",
        kind="change", facts=["u_commute"],
        echo="I remember you cycling along the river to the hospital; switching to the train "
             "is a big change.",
        core="The train can be a good chance to read, prepare lectures or simply rest.")]],
    # 13: the tortoise after the move, first lecture (yesterday)
    [[X("{tortoise} survived the move! He's got a new enclosure in the garden.", "u_tortoise3",
        facts=["u_tortoise"],
        echo="I'm so glad {tortoise} settled in after the move; a garden enclosure sounds "
             "perfect.", mood="good")],
     [X("I gave my first lecture {when}, to two hundred students!", "u_lecture",
        when="yesterday",
        echo="Your first lecture, to two hundred students! That's a real milestone.",
        mood="good")]],
    # 14: rowing moves to Saturdays (change), the book accepted
    [[X("I found a rowing club here too, but they go out on Saturday mornings.", "u_rowing2",
        kind="change", facts=["u_rowing"],
        echo="I remember you said you rowed on Sunday mornings back home; Saturday mornings "
             "with a new club sounds like a great way to meet people in {city2}.")],
     [X("My book about the flying tortoise has been accepted by a small publisher!",
        "u_book2", facts=["u_book"],
        echo="That's wonderful news! Having your flying tortoise book accepted by a publisher "
             "is a huge achievement.", mood="good")]],
    # 15: the wedding (relative date), partner's new shifts (change)
    [[X("{sister}'s wedding was {when}. I cried through my whole speech.", "u_wedding",
        when="last_weekday",
        echo="It sounds like {sister}'s wedding was very emotional, and crying through your "
             "speech just shows how much you love her.", mood="good")],
     [X("{partner} has transferred to the fire station in {city2}, and he's on day shifts "
        "now.", "u_partner2", kind="change", facts=["u_partner"],
        echo="I remember you said {partner} worked four-day shifts; day shifts at the station "
             "in {city2} should make evenings together much easier.", mood="good")]],
    # 16: nephew's visit (the day before yesterday)
    [[X("{nephew} stayed with us {when} and made me watch diggers for three hours.",
        "u_nephew_visit", when="day_before_yesterday",
        echo="Three hours of diggers with {nephew} sounds exhausting and adorable at the same "
             "time.", mood="good")]],
]

FACTS_AS = {
    "u_job": ("user", "pharmacist at {hospital}", "teaching pharmacology at the university"),
    "u_city": ("user", "{city1}", "{city2}"),
    "u_commute": ("user", "cycles along the river", "the train"),
    "u_tortoise": ("user", "{tortoise}, forty-three, inherited from her grandad", None),
    "u_harp": ("user", "harp lessons on Tuesday evenings", "Friday afternoons"),
    "u_coeliac": ("user", "coeliac since {date:u_coeliac}", None),
    "u_partner": ("user", "{partner}, a firefighter on four-day shifts", "day shifts in {city2}"),
    "u_kitchen": ("user", "builders started {date:u_kitchen}", None),
    "u_rowing": ("user", "Sunday mornings", "Saturday mornings"),
    "u_exam": ("user", "prescribing exam on {date:u_exam}", None),
    "u_sister": ("user", "{sister}, marrying at {venue}", None),
    "u_exam_pass": ("user", "{date:u_exam_pass}", None),
    "u_wasp": ("user", "wasp stings; adrenaline pen", None),
    "u_trip": ("user", "{trip1}", "{trip2}"),
    "u_book": ("user", "a children's book about a tortoise who wants to fly", None),
    "u_bday": ("user", "turned {age} on {date:u_bday}", None),
    "u_nephew": ("user", "{nephew}, four", None),
    "u_move": ("user", "moving to {city2}", None),
    "u_kitchen_done": ("user", "{date:u_kitchen_done}", None),
    "u_lastday": ("user", "{date:u_lastday}", None),
    "u_lecture": ("user", "{date:u_lecture}", None),
    "u_wedding": ("user", "{date:u_wedding}", None),
    "u_nephew_visit": ("user", "{date:u_nephew_visit}", None),
}

# How the assistant's replies are put together: an acknowledgement (by mood), the echo, the
# answer, some generic advice, a question or offer back. None of them states a fact of its own.
ACK_AS = {
    "good": ["That's wonderful to hear!", "Oh, how exciting!", "That's great news, thank you "
             "for sharing it with me.", "I love hearing this!", "What a lovely update!",
             "That's fantastic!", "How brilliant!", "That's really good news."],
    "sad": ["I'm sorry to hear that.", "That sounds really hard.", "Oh no, that's a lot to deal "
            "with.", "I'm sorry you're going through this.", "That sounds stressful, and it's "
            "okay to feel that way.", "Thank you for telling me; that can't be easy."],
    "neutral": ["Thanks for letting me know.", "I'd be happy to help with that.", "Got it, "
                "thank you for the context.", "That's useful to know.", "Of course, I can help "
                "with that.", "Thanks for sharing that with me.", "Absolutely."],
}
ADVICE_AS = [
    "A few things that often help in situations like this:\n\n- Break it into small steps you "
    "can finish in a day.\n- Write down what's worrying you, so it isn't all in your head.\n- "
    "Be kind to yourself if things take longer than planned.",
    "I think the most important thing is to go at a pace that feels manageable. Big changes "
    "usually feel easier once there's a little routine around them.",
    "If it helps, I'd suggest keeping a simple note of what works and what doesn't over the "
    "next couple of weeks; patterns tend to show up quickly.",
    "Some general suggestions:\n\n1. Set one realistic goal for the week.\n2. Ask for help "
    "early rather than late.\n3. Celebrate the small wins along the way.",
    "It might also be worth talking it through with someone you trust; saying things out loud "
    "often makes the next step clearer.",
    "From what you've described, you're already handling this thoughtfully. Sometimes the best "
    "approach is simply to keep going and adjust as you learn more.",
    "Here's what I'd keep in mind:\n\n- There's rarely one right way to do this.\n- Rest counts "
    "as progress.\n- It's fine to change the plan when circumstances change.",
    "I'd gently suggest not trying to do everything at once. Picking the one thing that would "
    "make the biggest difference is usually a good start.",
    "One approach that works for many people is to plan the week on Sunday evening, leaving some "
    "empty space for the unexpected.",
    "It can also help to remember why this matters to you; that makes the harder days easier.",
]
FOLLOW_AS = [
    "How are you feeling about it all?", "Would you like me to help you plan the next steps?",
    "Is there anything specific you'd like help with?", "Let me know if you'd like more ideas!",
    "Would it help if I put together a short checklist?", "What's the part you're most looking "
    "forward to?", "Do you want to talk through it a bit more?", "I'm here if you need anything "
    "else.", "Would you like some resources on this?", "How can I best support you with this?",
]
FRAME_AS = ["Here's how I'd think about it.", "I think the short answer is this.",
            "Let me break it down for you.", "I'll keep this practical.",
            "There are a few ways to look at it, but here's the most common one.",
            "I can give you a quick overview.", "Here's what usually works well."]
OPEN_AS = ["Sure!", "Great question.", "Happy to help!", "Of course.", "Good thinking.",
           "I'd be glad to help with that.", "Absolutely, here's what I'd suggest.",
           "That's a good one to ask."]

# The user's requests that state nothing about her (core answer; tips and an offer are added).
REQUESTS_AS = [
    ("Can you explain how compound interest works?",
     "Compound interest means you earn interest on your interest: each period, the interest is "
     "added to the balance, so the next period's interest is calculated on a bigger amount."),
    ("What's a good stretch for a stiff neck?",
     "Gentle neck tilts, chin tucks and slow shoulder rolls are good starting points; hold each "
     "for about twenty seconds and stop if anything hurts."),
    ("Give me three ideas for a rainy Sunday.",
     "You could try a long film marathon, a new recipe from scratch, or a jigsaw puzzle with a "
     "podcast on."),
    ("How long should I boil an egg for a runny yolk?",
     "About six minutes from boiling water, then straight into cold water to stop the cooking."),
    ("Can you summarise the plot of Hamlet in a few lines?",
     "Prince Hamlet learns that his uncle murdered his father to take the throne. He feigns "
     "madness while seeking revenge, and most of the main characters die by the end."),
    ("What's the difference between weather and climate?",
     "Weather is what the atmosphere does over hours or days; climate is the average pattern "
     "over decades."),
    ("How do I get a red wine stain out of a carpet?",
     "Blot it (don't rub), then dab with a mix of washing-up liquid, white vinegar and warm "
     "water, and blot again with a clean cloth."),
    ("Suggest a name for a book club.", "A few options: The Page Turners, Chapter and Verse, "
     "Spine Tinglers, or The Late Returns."),
    ("What are some good houseplants for low light?",
     "Snake plants, ZZ plants, pothos and peace lilies all cope well with low light."),
    ("How do I write a good thank-you note?",
     "Name the gift or gesture, say specifically why it meant something, and end with a warm "
     "line about the future."),
    ("Why is the sky blue?", "Sunlight is scattered by the molecules in the air, and shorter "
     "blue wavelengths scatter much more than red ones, so blue light reaches us from every "
     "direction."),
    ("Can you recommend a podcast about history?",
     "Popular choices include long-form narrative shows on ancient history, and shorter "
     "weekly ones that tackle a single event in each episode."),
    ("What's a quick way to fall asleep?", "A consistent wind-down routine, a cool dark room, "
     "no screens for half an hour and slow breathing (in for four, out for six) help many "
     "people."),
    ("How many cups are in a litre?", "About four metric cups, since a metric cup is 250 ml."),
    ("How do I make my emails sound less abrupt?",
     "Open with a short greeting, use 'could you' rather than 'please do', and end with a "
     "thank-you."),
    ("What's a good way to learn vocabulary in a new language?",
     "Spaced repetition flashcards, learning words in short phrases, and using new words the "
     "same day all help them stick."),
    ("Explain what a black hole is, simply.",
     "A black hole is a region where gravity is so strong that nothing, not even light, can "
     "escape once it crosses the edge, called the event horizon."),
    ("Can you suggest a board game for four adults?",
     "Cooperative games and quick party games both work well with four; pick one with short "
     "turns so nobody waits long."),
    ("How do I keep cut flowers fresh longer?",
     "Trim the stems at an angle, change the water every two days, remove leaves below the "
     "waterline and keep them away from fruit."),
    ("What's the best way to clean a cast iron pan?",
     "Rinse with hot water, scrub with a brush, dry it on the hob and rub in a thin layer of "
     "oil."),
    ("Can you help me think of a toast for a leaving party?",
     "Something like: 'To a colleague who made the hard days lighter. We'll miss you, and we "
     "can't wait to hear what you do next.'"),
    ("How do I stop procrastinating?", "Start with a tiny first step, set a timer for "
     "twenty-five minutes, and remove the easiest distraction (usually your phone)."),
    ("What's a good gift for someone who has everything?",
     "Experiences tend to work best: a class, a concert, a nice meal, or a donation in their "
     "name."),
    ("Can you explain what inflation is?", "Inflation is the general rise in prices over time, "
     "which means the same money buys a little less each year."),
    ("What should I pack for a weekend city break?", "Comfortable shoes, layers, a portable "
     "charger, a small umbrella and a reusable water bottle."),
    ("How do I politely decline an invitation?",
     "Thank them, give a short honest reason if you want to, and suggest another time if you "
     "mean it."),
    ("What's the difference between a latte and a flat white?",
     "A flat white has less milk and a thinner layer of microfoam, so the coffee tastes "
     "stronger."),
    ("Why do onions make you cry?", "Cutting them releases a compound that turns into a gas; "
     "when it reaches your eyes it irritates them and they water."),
    ("Help me plan a simple dinner party menu.",
     "A make-ahead starter, a one-tray main and a no-bake dessert keep you out of the kitchen "
     "and with your guests."),
    ("What's a good beginner exercise routine?",
     "Three sessions a week of brisk walking or cycling, plus two short strength sessions with "
     "squats, press-ups and planks, is a good start."),
    ("Can you tell me a fun fact?", "Octopuses have three hearts and blue blood."),
    ("How often should I water a cactus?", "In summer, roughly every two weeks once the soil "
     "is completely dry; in winter, barely at all."),
    ("How do I make a budget spreadsheet?",
     "List your monthly income, then fixed costs, then flexible spending, and subtract; a "
     "column per month lets you see trends."),
    ("What's a good way to remember people's names?",
     "Repeat the name when you're introduced, link it to something memorable, and use it once "
     "more before you say goodbye."),
    ("Can you recommend a classic novel that's not too long?",
     "Short classics that many people enjoy include novellas by Steinbeck, Fitzgerald and "
     "Woolf, all readable in a weekend."),
    ("Is it better to stretch before or after a run?",
     "A short dynamic warm-up before and static stretching afterwards is the usual advice."),
]
TIP_TOPICS_AS = ["decluttering a wardrobe", "meal planning for the week", "getting up earlier",
                 "keeping a journal", "drinking more water", "reading more books",
                 "spending less time on my phone", "saving money on groceries",
                 "taking better photos on my phone", "learning to touch type",
                 "keeping houseplants alive", "staying focused when working from home",
                 "making small talk at parties", "writing a cover letter",
                 "running my first 5k", "organising digital photos"]
TIP_BULLETS_AS = [
    "Start small: five minutes a day is better than an hour once a month.",
    "Pick a fixed time, so it becomes a habit rather than a decision.",
    "Track your progress somewhere you'll see it.",
    "Make the first step as easy as possible.",
    "Don't aim for perfect; aim for consistent.",
    "Tell a friend what you're trying, for a little accountability.",
    "Remove one obstacle before you begin.",
    "Review what's working after two weeks and adjust.",
    "Reward yourself for sticking with it.",
    "Expect a few off days; they're part of the process.",
]
OFFER_AS = [
    "Would you like me to go into more detail on any of these?",
    "I hope that helps! Let me know if you'd like more suggestions.",
    "If you tell me a bit more about what you have in mind, I can tailor this further.",
    "Happy to help with anything else, too.",
    "Let me know how it goes!",
    "Would you like a shorter version you could keep on your phone?",
]
OPENERS_AS = [
    ("Hi again!", "Hello again! It's lovely to hear from you. What's on your mind today?"),
    ("Morning! Got a few questions for you.", "Good morning! I'd be happy to help. Ask away, "
     "and we'll go through them one at a time."),
    ("Hey, it's me.", "Hi! Welcome back. How have things been since we last talked?"),
    ("Hello, I need some help.", "Hello! Of course, I'm here to help. What would you like to "
     "work on?"),
    ("Back again!", "Welcome back! I'm glad you stopped by. What can I do for you today?"),
    ("Hi, quick chat?", "Hi! Absolutely, take as long as you like. What's up?"),
    ("Good evening.", "Good evening! I hope your day has been kind to you. How can I help?"),
    ("Hi, can I pick your brain?", "Of course! I'm all ears, so to speak. What would you like "
     "to talk about?"),
    ("Hello!", "Hello! It's great to see you again. What shall we talk about?"),
    ("Hey there.", "Hey! Thanks for coming back. What would you like help with today?"),
    ("Hiya, me again.", "Hi! Always happy to chat. What's happening?"),
    ("Hi! Long week.", "Hi! I'm sorry it's been a long week. Do you want to talk about it, or "
     "would you rather I help with something specific?"),
    ("Good afternoon!", "Good afternoon! How can I make your day a little easier?"),
    ("Hi, I've got news and questions.", "Hi! I'd love to hear both. Start wherever you like."),
    ("Hello again, assistant.", "Hello again! I'm ready when you are."),
    ("Hey! Do you have a minute?", "Hey! I always have a minute. What would you like to "
     "discuss?"),
]
CLOSERS_AS = [
    ("Thanks, that's all for today.", "You're very welcome! Take care, and come back any time."),
    ("Great, thank you!", "My pleasure! I hope the rest of your day goes well."),
    ("That's really helpful, bye!", "I'm glad it helped. Goodbye for now, and good luck!"),
    ("Okay, I'm off to bed.", "Sleep well! I'm here whenever you want to pick this up again."),
    ("Thanks, talk soon.", "Any time! Talk soon."),
    ("Perfect, that's everything.", "Wonderful. Have a lovely evening!"),
    ("Cheers, bye for now.", "Bye for now! Remember to be kind to yourself."),
    ("Thank you so much.", "You're welcome! It was nice chatting with you."),
    ("I'll try that. Bye!", "Let me know how it goes. Bye!"),
    ("That's me done, thanks.", "Thanks for the chat! Take care."),
    ("Brilliant, thank you.", "Happy to help! See you next time."),
    ("Okay, speak later.", "Speak later! Good luck with everything."),
    ("Thanks for listening.", "Of course. I'm always here to listen."),
    ("Got to go, thanks!", "No problem, have a good one!"),
    ("Lovely, that's all.", "Glad I could help. Bye for now!"),
    ("Night!", "Good night! Rest well."),
]
TIP_TOPICS_AS += ["batch cooking on a Sunday", "writing a best man's speech", "packing light",
                  "cleaning the oven", "sleeping on a plane", "learning to draw",
                  "sticking to a morning routine", "choosing a new sofa", "starting a podcast",
                  "getting better at chess", "buying a second-hand car", "keeping a diary",
                  "hosting a games night", "meditating as a beginner", "painting a room",
                  "cutting down on sugar", "being more punctual", "writing a short story",
                  "getting into birdwatching", "planning a road trip", "negotiating a salary",
                  "keeping in touch with old friends", "growing herbs on a windowsill",
                  "making better coffee at home"]
THANKS_AS = [
    ("Ha, that's useful.", "I'm glad it's useful! Let me know if anything else comes up."),
    ("Thanks, makes sense.", "You're welcome! It's always good to have it laid out clearly."),
    ("Interesting!", "I think so too! There's a lot more to it if you ever want to dig deeper."),
    ("Okay, good to know.", "Great! I'm happy to help with anything else on your list."),
    ("You're a star.", "That's very kind of you to say! I'm glad I could help."),
    ("Hmm, I'll think about it.", "That sounds sensible. There's no rush, and I'm happy to go "
     "over it again whenever you like."),
    ("Perfect, thanks.", "You're very welcome!"),
    ("That's a relief.", "I'm glad to hear that. It's nice when something turns out simpler "
     "than expected."),
    ("Oh, I didn't know that.", "It surprises a lot of people! I'm glad you found it "
     "interesting."),
    ("Great, I'll try that.", "I hope it works well for you. Let me know how it goes!"),
    ("Lol.", "I'm glad that made you smile!"),
    ("Noted.", "Great. Is there anything else I can help with?"),
]

P_AS = [
    ("single-hop", "Where did I work as a pharmacist?", ["u_job1"], ["{hospital}"], "{hospital}", {}),
    ("single-hop", "Which wards did {U} mostly work on?", ["u_job1"], ["cancer wards"], "the cancer wards",
     {}),
    ("single-hop", "What is my tortoise called?", ["u_tortoise1", "u_tortoise2"], ["{tortoise}"],
     "{tortoise}", {}),
    ("single-hop", "How old is {U}'s tortoise?", ["u_tortoise2"], ["forty-three"], "forty-three", {}),
    ("single-hop", "Who did I inherit my tortoise from?", ["u_tortoise1"], ["grandad"], "my grandad", {}),
    ("single-hop", "What instrument am I learning?", ["u_harp1"], ["harp"], "the harp", {}),
    ("single-hop", "What does {U}'s partner do for a living?", ["u_partner"], ["firefighter"],
     "he's a firefighter", {}),
    ("single-hop", "What is my partner's name?", ["u_partner"], ["{partner}"], "{partner}", {}),
    ("single-hop", "What can't {U} eat any more?", ["u_coeliac"], ["gluten"], "gluten (coeliac)", {}),
    ("single-hop", "What am I allergic to?", ["u_wasp"], ["wasp stings"], "wasp stings", {}),
    ("single-hop", "What does {U} carry because of an allergy?", ["u_wasp"], ["adrenaline pen"],
     "an adrenaline pen", {}),
    ("single-hop", "Where is my sister getting married?", ["u_sister"], ["{venue}"], "{venue}", {}),
    ("single-hop", "What is {U}'s role at her sister's wedding?", ["u_sister"], ["maid of honour"],
     "maid of honour", {}),
    ("single-hop", "What is my sister called?", ["u_sister"], ["{sister}"], "{sister}", {}),
    ("single-hop", "What is {U}'s children's book about?", ["u_book1"], ["tortoise", "fly"],
     "a tortoise who wants to fly", {}),
    ("single-hop", "How old is {U}'s nephew?", ["u_nephew"], ["four"], "four", {}),
    ("single-hop", "What is my nephew obsessed with?", ["u_nephew"], ["diggers"], "diggers", {}),
    ("single-hop", "Which exam did {U} sit?", ["u_exam"], ["independent prescribing"],
     "the independent prescribing exam", {}),
    ("single-hop", "How many students came to my first lecture?", ["u_lecture"], ["two hundred"],
     "two hundred", {}),
    ("single-hop", "How many people signed {U}'s leaving card?", ["u_lastday"], ["forty people"], "forty",
     {}),
    ("single-hop", "How old did {U} turn on her last birthday?", ["u_bday"], ["{age}"], "{age}", {}),
    ("single-hop", "Where does {U}'s tortoise live now?", ["u_tortoise3"], ["enclosure in the garden"],
     "a new enclosure in the garden", {}),
    ("single-hop", "How long did my old bike commute take?", ["u_commute1"], ["twenty minutes"],
     "about twenty minutes each way", {}),
    ("multi-hop", "What is my nephew's mother planning for next summer?", ["u_nephew", "u_sister"],
     ["sister", "married"], "her wedding at {venue}", {}),
    ("multi-hop", "Who is {U}'s children's book based on, and how old is he?", ["u_book1", "u_tortoise2"],
     ["{tortoise}", "forty-three"], "{tortoise}, forty-three", {}),
    ("multi-hop", "Who am I going hiking with, and where?", ["u_trip1", "u_trip2"], ["{partner}", "{trip2}"],
     "{partner}, in {trip2}", {}),
    ("multi-hop", "Which city did {U} live in while working at {hospital}?", ["u_job1", "u_commute1"],
     ["{hospital}", "{city1}"], "{city1}", {}),
    ("multi-hop", "What job did {U} leave, and what is the new one?", ["u_job1", "u_job2"],
     ["pharmacist", "pharmacology"], "hospital pharmacist; teaching pharmacology", {}),
    ("multi-hop", "Why was my birthday cake gluten-free?", ["u_coeliac", "u_bday"],
     ["coeliac", "gluten-free cake"], "I'm coeliac", {}),
    ("multi-hop", "What happened to {U}'s book about a flying tortoise?", ["u_book1", "u_book2"],
     ["tortoise", "publisher"], "a small publisher accepted it", {}),
    ("multi-hop", "Where does {U}'s partner work now, and does {U} live in the same city?",
     ["u_partner2", "u_moveday"], ["fire station in {city2}", "{city2}"], "the fire station in {city2}; yes",
     {}),
    ("multi-hop", "Which of my hobbies changed day after the move?", ["u_rowing1", "u_rowing2"],
     ["Sunday", "Saturday"], "rowing: Sunday to Saturday mornings", {}),
    ("temporal", "When was {U} diagnosed coeliac?", ["u_coeliac"], ["diagnosed coeliac", "{when:u_coeliac}"],
     "{date:u_coeliac}", {"date": "u_coeliac"}),
    ("temporal", "When did the builders start on {U}'s kitchen?", ["u_kitchen"],
     ["builders", "{when:u_kitchen}"], "{date:u_kitchen}", {"date": "u_kitchen"}),
    ("temporal", "When was my prescribing exam?", ["u_exam"], ["prescribing exam", "{when:u_exam}"],
     "{date:u_exam}", {"date": "u_exam"}),
    ("temporal", "When did {U} get the prescribing exam results?", ["u_exam_pass"],
     ["results", "{when:u_exam_pass}"], "{date:u_exam_pass}", {"date": "u_exam_pass"}),
    ("temporal", "When was my birthday?", ["u_bday"], ["I turned", "{when:u_bday}"], "{date:u_bday}",
     {"date": "u_bday"}),
    ("temporal", "When was {U}'s kitchen finished?", ["u_kitchen_done"],
     ["finished", "{when:u_kitchen_done}"], "{date:u_kitchen_done}", {"date": "u_kitchen_done"}),
    ("temporal", "When was {U}'s last day at {hospital}?", ["u_lastday"], ["last day", "{when:u_lastday}"],
     "{date:u_lastday}", {"date": "u_lastday"}),
    ("temporal", "When did we move into the place in {city2}?", ["u_moveday"], ["moved", "{when:u_moveday}"],
     "{date:u_moveday}", {"date": "u_moveday"}),
    ("temporal", "When did {U} give her first lecture?", ["u_lecture"], ["first lecture", "{when:u_lecture}"],
     "{date:u_lecture}", {"date": "u_lecture"}),
    ("temporal", "When was {sister}'s wedding?", ["u_wedding"], ["wedding", "{when:u_wedding}"],
     "{date:u_wedding}", {"date": "u_wedding"}),
    ("temporal", "When did {nephew} stay with {U}?", ["u_nephew_visit"],
     ["stayed with us", "{when:u_nephew_visit}"], "{date:u_nephew_visit}", {"date": "u_nephew_visit"}),
    ("updated-fact", "What does {U} do for work now?", ["u_job2"], ["pharmacology"],
     "teaching pharmacology at the university", {"outdated": ["{hospital}"], "superseded": ["u_job1"]}),
    ("updated-fact", "Am I still a hospital pharmacist?", ["u_job2", "u_lastday"],
     ["pharmacology", "last day"], "no: I teach pharmacology at the university now",
     {"outdated": ["cancer wards"], "superseded": ["u_job1"]}),
    ("updated-fact", "Which city does {U} live in now?", ["u_move", "u_moveday"], ["{city2}"], "{city2}",
     {"outdated": ["{city1}"], "superseded": ["u_commute1"]}),
    ("updated-fact", "How do I get to work now?", ["u_commute2"], ["train"], "by train",
     {"outdated": ["cycle"], "superseded": ["u_commute1"]}),
    ("updated-fact", "Does {U} still cycle to work?", ["u_commute2"], ["train"], "no, she takes the train",
     {"outdated": ["along the river"], "superseded": ["u_commute1"]}),
    ("updated-fact", "When are {U}'s harp lessons now?", ["u_harp2"], ["Friday afternoons"],
     "Friday afternoons", {"outdated": ["Tuesday evenings"], "superseded": ["u_harp1"]}),
    ("updated-fact", "Where am I going hiking?", ["u_trip2"], ["{trip2}"], "{trip2}",
     {"outdated": ["{trip1}"], "superseded": ["u_trip1"]}),
    ("updated-fact", "On which day does {U} go rowing now?", ["u_rowing2"], ["Saturday mornings"],
     "Saturday mornings", {"outdated": ["Sunday mornings"], "superseded": ["u_rowing1"]}),
    ("updated-fact", "What shifts does my partner work now?", ["u_partner2"], ["day shifts"], "day shifts",
     {"outdated": ["four-day shifts"], "superseded": ["u_partner"]}),
    ("unanswerable", "What is my dog called?", [], [], None, {"tempting": ["{tortoise}"]}),
    ("unanswerable", "What did I name my book club?", [], [], None,
     {"tempting": ["The Page Turners", "Chapter and Verse"]}),
    ("unanswerable", "What is the title of {U}'s children's book?", [], [], None,
     {"tempting": ["tortoise who wants to fly"]}),
    ("unanswerable", "What is the name of my harp teacher?", [], [], None,
     {"tempting": ["Friday afternoons"]}),
    ("unanswerable", "What did {U} buy {nephew} for his birthday?", [], [], None,
     {"tempting": ["toy excavator", "digger picture book"]}),
    ("unanswerable", "Which hiking boots did I buy?", [], [], None, {"tempting": ["waterproof boot"]}),
    ("unanswerable", "What is {U}'s rowing club called?", [], [], None, {"tempting": ["Saturday mornings"]}),
    ("unanswerable", "Which publisher accepted {U}'s book?", [], [], None, {"tempting": ["small publisher"]}),
    ("unanswerable", "What is my sister's husband called?", [], [], None, {"tempting": ["{partner}"]}),
    ("unanswerable", "What mark did {U} get in the prescribing exam?", [], [], None,
     {"tempting": ["passed"]}),
    ("unanswerable", "Which gluten-free recipe did I cook last week?", [], [], None,
     {"tempting": ["sweet potato and chickpea curry"]}),
    ("unanswerable", "Which university did {U} study at?", [], [], None,
     {"tempting": ["university in {city2}"]}),
]


EXCHANGES_PER_SESSION_AS = 13  # 26 lines a session, greeting and goodbye included


def generate_assistant(seed: int = 7) -> dict:
    """Build ``heldout_assistant`` (format: data/evaluation/README.md)."""
    rng = random.Random(seed + 1000)  # not the two-person file's stream
    values = pick_values_as(rng)
    dates = session_dates(rng, dt.date(2025, 10, 1), len(STORY_AS), gap=(8, 14))
    openers = rng.sample(OPENERS_AS, len(STORY_AS))
    closers = rng.sample(CLOSERS_AS, len(STORY_AS))
    fillers = ([("request", r) for r in REQUESTS_AS] + [("tips", t) for t in TIP_TOPICS_AS]
               + [("thanks", t) for t in THANKS_AS])
    fillers = rng.sample(fillers, len(fillers))
    used = [0]

    def reply_for(ex: dict) -> str:
        if ex["label"]:  # the user told something: acknowledge, echo, answer, advise, ask back
            parts = [rng.choice(ACK_AS[ex["mood"]]), ex["echo"]]
            if ex["core"]:
                parts.append(ex["core"])
            text = " ".join(parts)
            if rng.random() < 0.85:
                text += "\n\n" + rng.choice(ADVICE_AS)
            return text + "\n\n" + rng.choice(FOLLOW_AS)
        text = rng.choice(OPEN_AS) + " " + rng.choice(FRAME_AS) + " " + ex["core"]
        if rng.random() < 0.7:
            text += "\n\nA few general tips:\n\n" + "\n".join(
                f"- {b}" for b in rng.sample(TIP_BULLETS_AS, 3))
        return text + "\n\n" + rng.choice(OFFER_AS)

    def filler() -> tuple[str, str]:
        kind, item = fillers[used[0] % len(fillers)]
        used[0] += 1
        if kind == "thanks":
            return item
        if kind == "tips":
            bullets = rng.sample(TIP_BULLETS_AS, rng.randint(3, 5))
            return (f"Do you have any tips for {item}?",
                    f"I'd be happy to help with {item.replace('my ', 'your ')}! Here are a few "
                    "suggestions:\n\n"
                    + "\n".join(f"{i}. {b}" for i, b in enumerate(bullets, start=1))
                    + "\n\n" + rng.choice(OFFER_AS))
        return item[0], reply_for(Q(*item))

    turns: list[dict] = []
    labels: dict[str, str] = {}
    events: dict[str, tuple[str, dt.date]] = {}
    session = [0]

    def add(speaker: str, text: str, kind: str, facts) -> str:
        turn_id = f"t{len(turns) + 1:03d}"
        turns.append({"id": turn_id, "session_id": f"session-{session[0]}",
                      "date": dates[session[0] - 1].isoformat(), "speaker": speaker,
                      "text": text, "kind": kind, "facts": list(facts)})
        return turn_id

    for number, blocks in enumerate(STORY_AS, start=1):
        session[0] = number
        day = dates[number - 1]
        story = sum(len(b) for b in blocks)
        order = EXCHANGES_PER_SESSION_AS - 2 - story + len(blocks)
        slots = sorted(rng.sample(range(order), len(blocks)))
        mixed: list = [None] * order
        for slot, block in zip(slots, blocks, strict=True):
            mixed[slot] = block
        add("user", openers[number - 1][0], "filler", ())
        add("assistant", openers[number - 1][1], "reply", ())
        for block in mixed:
            if block is None:
                u, a = filler()
                add("user", u, "filler", ())
                add("assistant", a, "reply", ())
                continue
            for ex in block:
                text = ex["u"]
                if ex["when"]:
                    phrase, when = resolve_when(ex["when"], day, rng)
                    events[ex["label"]] = (phrase, when)
                    text = text.replace("{when}", phrase)
                turn_id = add("user", fill(text, values), ex["kind"], ex["facts"])
                if ex["label"]:
                    labels[ex["label"]] = turn_id
                add("assistant", fill(reply_for(ex), values, events), "reply", ())
        add("user", closers[number - 1][0], "filler", ())
        add("assistant", closers[number - 1][1], "reply", ())

    session[0] = len(STORY_AS) + 1
    speaker_of = {t["id"]: t["speaker"] for t in turns}
    probes = build_probes(rng, P_AS, values, events, labels, speaker_of,
                          lambda q: add("user", q, "probe", ()), lambda q: person(q, [values["U"]]))
    for p in probes:
        p["about"] = "user"
    history = [t for t in turns if t["kind"] != "probe"]
    counts = {c: sum(p["category"] == c for p in probes) for c in CATEGORIES}
    sessions = [{"id": f"session-{i}", "date": d.isoformat(), "weekday": WEEKDAYS[d.weekday()]}
                for i, d in enumerate(dates, start=1)]
    data = {
        "id": "heldout_assistant",
        "held_out": True,
        "seed": seed,
        "language": "en",
        "user_id": values["U"].lower(),
        "description": (
            f"{HELD_OUT_NOTE} {len(history)} lines of {values['U']} (user) and an AI assistant "
            f"whose replies read like a real model's (long, first person, suggestions and "
            f"lists; they restate the user's facts and add generic advice, no facts of their "
            f"own), over {len(STORY_AS)} dated sessions, then {len(probes)} probe questions in "
            f"session {len(STORY_AS) + 1}: " + ", ".join(f"{n} {c}" for c, n in counts.items())
            + ". Every fact is the user's; only her lines are evidence."),
        "system": ("You are a helpful assistant with memory of earlier conversations with "
                   f"{values['U']}. Answer questions about {values['U']} briefly, from what "
                   "she told you; if she never said it, say you don't know."),
        "speakers": {"user": values["U"], "assistant": "the assistant"},
        "sessions": sessions,
        "facts": {key: {"speaker": who, "value": fill(value, values, events),
                        "changed_to": fill(changed, values, events) if changed else None}
                  for key, (who, value, changed) in FACTS_AS.items()},
        "values": values,
        "turns": turns,
        "probes": probes,
    }
    self_check(data, min_lines=400, min_sessions=15, probes=(50, 120))
    return data


# ===============================================================================================


def self_check(data: dict, min_lines: int, min_sessions: int, probes: tuple[int, int]) -> None:
    """What data/evaluation/README.md promises about a held-out file; AssertionError if not."""
    turns = {t["id"]: t for t in data["turns"]}
    order = {t["id"]: i for i, t in enumerate(data["turns"])}
    history = [t for t in data["turns"] if t["kind"] != "probe"]
    assert len(history) >= min_lines, len(history)
    assert len(data["sessions"]) - 1 >= min_sessions
    assert probes[0] <= len(data["probes"]) <= probes[1], len(data["probes"])
    last = data["sessions"][-1]["id"]
    assert all(t["session_id"] == last and t["speaker"] == "user"
               for t in data["turns"] if t["kind"] == "probe")
    assert all(t["session_id"] != last for t in history)
    assert {p["category"] for p in data["probes"]} == set(CATEGORIES)
    keys = {k for t in history for k in t["facts"]}
    assert keys <= set(data["facts"]), keys - set(data["facts"])
    missing = []
    for p in data["probes"]:
        assert turns[p["turn_id"]]["text"] == p["question"]
        if p["category"] == "unanswerable":
            assert p["evidence"] == [] and p["expects"] == [] and p["tempting"], p
            continue
        assert p["evidence"] and p["expects"] and p["answer"], p
        assert all(order[i] < order[p["turn_id"]] and turns[i]["kind"] in ("fact", "change")
                   for i in p["evidence"]), p
        text = " ".join(turns[i]["text"] for i in p["evidence"]).lower()
        missing += [(p["question"], w) for w in p["expects"] if w.lower() not in text]
    assert not missing, f"expected words not in the evidence turns: {missing}"


def generate_all(seed: int = 7) -> dict[str, dict]:
    return {"heldout_two_person": generate_two_person(seed),
            "heldout_assistant": generate_assistant(seed)}


def main(argv: list[str] | None = None) -> int:
    """``--seed N`` (default 7), ``--out DIR`` (default data/evaluation), ``--check``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR, help="a folder")
    parser.add_argument("--check", action="store_true",
                        help="regenerate in memory; exit 1 if a file in --out differs")
    args = parser.parse_args(argv)
    status = 0
    for name, data in generate_all(args.seed).items():
        path = args.out / f"{name}.json"
        text = render(data)
        if args.check:
            current = path.read_text(encoding="utf-8") if path.exists() else None
            if current != text:
                print(f"{path} differs from what seed {args.seed} generates; run: python "
                      f"scripts/make_heldout_conversations.py --seed {args.seed}")
                status = 1
            else:
                print(f"{path} is up to date")
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}: {data['description']}")
    return status


if __name__ == "__main__":
    sys.exit(main())
