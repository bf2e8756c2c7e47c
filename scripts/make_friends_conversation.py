"""Generate the friends evaluation conversation (two people chatting) from a seed.

    python scripts/make_friends_conversation.py            # writes data/evaluation/friends_conversation.json
    python scripts/make_friends_conversation.py --check    # exit 1 if the committed file differs
    python scripts/make_friends_conversation.py --seed 3 --out /tmp/other.json

The hard conversation (``make_hard_conversation.py``) is a user and an AI assistant: every fact is
the user's. Real multi-session chats between two people (the public LoCoMo benchmark) are not like
that, and this file tests the difference. Two friends catch up over 16 dated sessions: speaker
"user" is one of them (Nora, say), speaker "assistant" the other (Jess). Both state facts about
THEMSELVES in the first person, about half each ("I painted a lake sunrise last year", "my kids",
"we went camping"), usually in passing and often followed by a question back in the same turn
("I signed up for a pottery class last Saturday! What have you been up to?"). Greetings and small
talk fill the gaps; some facts are split over two turns of one speaker, told by pronoun or with a
relative date ("last Saturday", resolved from the session's date); some change later (a move, a
new job). A final session asks probe questions, mostly in the third person by name ("What did Jess
paint last year?"), about both friends.

The story is fixed; the seed picks the names and values, the session dates, the greetings, where
the small talk goes and the order of the probes. Same seed, same bytes. The format is the hard
conversation's (data/evaluation/README.md), so ``helpers.evaluate`` replays it unchanged.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or loaded by path
from conversation_cli import WEEKDAYS, build_probes, fill, render, resolve_when, run_cli  # noqa: E402, F401

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "data/evaluation/friends_conversation.json"
CATEGORIES = ("single-hop", "multi-hop", "temporal", "updated-fact", "unanswerable")

# The seed picks one value per slot. Values of one slot never appear in another slot's pool.
# U = the "user" friend, F = the "assistant" friend; u_* are U's, f_* are F's.
POOLS = {
    "U": ["Nora", "Priya", "Hannah", "Leila"],
    "F": ["Jess", "Marta", "Sofia", "Amara"],
    "u_city1": ["Leeds", "Bristol", "Norwich"],
    "u_city2": ["Edinburgh", "Stirling", "Cardiff"],
    "u_agency": ["Pixelhouse", "Brightside", "Northstar"],
    "u_partner": ["Ravi", "Tom", "Luca", "Owen"],
    "u_cuisine": ["Italian", "Lebanese", "Spanish"],
    "u_cat": ["Miso", "Pepper", "Biscuit"],
    "u_brother": ["Sam", "Danny", "Kit"],
    "u_lang": ["Portuguese", "Japanese", "Greek"],
    "u_trip": [("Lisbon", "Porto"), ("Tokyo", "Osaka"), ("Athens", "Crete")],
    "u_car": ["Fiat Panda", "Ford Fiesta", "Renault Clio"],
    "u_charity": ["the food bank", "the children's hospice", "the animal shelter"],
    "u_book": ["Middlemarch", "Rebecca", "Jane Eyre"],
    "f_husband": ["Mark", "Dev", "Chris", "Ben"],
    "f_kids": [("Leo", "Maya"), ("Finn", "Ella"), ("Noah", "Zoe")],  # a son, then a daughter
    "f_dog": ["Bruno", "Ziggy", "Rosie", "Teddy"],
    "f_subject": ["art", "music", "drama"],
    "f_lake": ["Lake Windermere", "Loch Lomond", "Derwent Water"],
    "f_camp": ["the Peak District", "Snowdonia", "the Yorkshire Dales"],
    "f_trip": [("Croatia", "Sicily"), ("Portugal", "Norway"), ("Greece", "Iceland")],
    "f_instrument": ["saxophone", "trumpet", "keyboard"],
    "f_veg": ["courgettes", "runner beans", "pumpkins"],
    "f_mum_town": ["Whitby", "Harrogate", "Durham"],
    "f_allergen": ["kiwi", "walnuts", "sesame"],
    "f_book": [("Circe", "Piranesi"), ("Normal People", "Klara and the Sun"),
               ("The Secret History", "Hamnet")],
}


def pick_values(rng: random.Random) -> dict[str, str]:
    v = {k: rng.choice(pool) for k, pool in POOLS.items()}
    v["u_trip1"], v["u_trip2"] = v.pop("u_trip")
    v["f_kid1"], v["f_kid2"] = v.pop("f_kids")
    v["f_trip1"], v["f_trip2"] = v.pop("f_trip")
    v["f_book1"], v["f_book2"] = v.pop("f_book")
    return v


# --- the story ---------------------------------------------------------------------------------
# A session is a list of blocks; a block is a list of exchanges kept together; an exchange is one
# line of U (speaker "user") and the line of F (speaker "assistant") after it. A line is a string
# (small talk) or L(...): its text, a label probes refer to, its kind (fact / change), the fact
# keys it carries and a relative date ({when} in the text), resolved against the session's date.


def L(text, label=None, kind="fact", facts=None, when=None):  # noqa: N802 (a table constructor)
    return {"text": text, "label": label, "kind": kind if label else "filler",
            "facts": list(facts) if facts is not None else ([label] if label else []),
            "when": when}


def E(u, a):  # noqa: N802 - one exchange: U's line, then F's
    return (u if isinstance(u, dict) else L(u), a if isinstance(a, dict) else L(a))


STORY = [
    # session 1: catching up. U's job and flat; F's kids, husband, painting
    [
        [E(L("Honestly, not much has changed. Still doing graphic design at {u_agency}, still in "
             "my tiny flat in {u_city1} with the radiator that screams. What about you, how are "
             "the kids?", "u_intro", facts=["u_job", "u_city"]),
           L("Oh, the screaming radiator! My kids are great and loud: {f_kid1} is nine now and "
             "{f_kid2} just turned six, so it's football and glitter all day.", "f_kids")),
         E("Six! That's mad. And how's your other half?",
           L("{f_husband}'s still on nights as a paramedic, so I'm basically a single mum four "
             "nights a week.", "f_husband")),
         E("That sounds exhausting. Do you get any time for yourself at all?",
           L("A little! I started painting again. I painted a sunrise over {f_lake} last year "
             "that I actually liked, so now I do watercolours every Sunday morning before anyone "
             "wakes up.", "f_paint")),
         E("I remember that one! The pink sky. You should frame it.",
           L("It's already on the landing wall, my one proud corner.", "f_paint_wall"))],
    ],
    # session 2: U's pottery class (relative date), F's dog
    [
        [E(L("I signed up for a pottery class {when}! It starts next week and I've already "
             "bought an apron. What have you been up to?", "u_pottery", when="last_weekday"),
           L("Ooh, send me your first wonky bowl. And we got a puppy! A scruffy terrier mix from "
             "the rescue.", "f_dog_got")),
         E("No way! What's he called?",
           L("{f_dog}. The kids chose it, and he already answers to it, mostly when there's "
             "cheese involved.", "f_dog_name")),
         E("He sounds perfect. Does he get on with the kids?",
           "Obsessed with them. He sleeps on {f_kid1}'s bed every night, don't tell "
           "{f_husband}."),
         E("Okay I need photos immediately.", "Sending you about forty, brace yourself.")],
        [E(L("Pottery is on Thursday evenings, by the way, in a studio above a bakery, so the "
             "whole room smells of bread.", "u_pottery_day"),
           "That sounds like heaven. I'd never get any pots made.")],
    ],
    # session 3: U's cat (split + pronoun); F's job
    [
        [E(L("So I did a thing {when}... I adopted a cat.", "u_cat_adopt", when="last_weekday"),
           "You didn't! You always said you were a dog person!"),
         E(L("I know, I know. She's called {u_cat}, she's a tabby, and she already owns the "
             "sofa.", "u_cat_name"),
           "{u_cat}, I love it. {f_dog} would lose his mind.")],
        [E("How's school? Are the kids behaving?",
           L("Mostly! I've been teaching {f_subject} at the primary for eight years now and Year "
             "Six still wears me out every single June.", "f_job1", facts=["f_job"])),
         E("Eight years, wow. I couldn't do it.",
           "Some days I can't either, but the good days make up for it.")],
        [E("I'm thinking of painting the living room green. Thoughts?",
           "Do it! Sage green, not mint. Mint is a bathroom colour.")],
    ],
    # session 4: U's brother engaged; F's allergy; U's language
    [
        [E(L("Big family news: my little brother {u_brother} got engaged! They want a summer "
             "wedding and they're already fighting about the playlist.", "u_brother"),
           "Oh that's lovely! Tell him congratulations from me. Do you like her?"),
         E("She's great, honestly better than he deserves. Anyway, how was your weekend?",
           L("Bit of a disaster. We went to a new Thai place and I had a reaction to the "
             "dressing, turns out it had {f_allergen} in it. I'm allergic, I should have "
             "asked.", "f_allergy")),
         E("Oh no, are you okay?", "Fine now, just puffy and embarrassed.")],
        [E(L("On a nicer note, I started learning {u_lang} on an app. Sixty days in a row so "
             "far! Don't laugh.", "u_lang"),
           "Sixty days! I'm impressed, I can't keep a plant alive for sixty days."),
         E("Ha! How's the painting going, by the way?",
           "Slowly. The kids keep stealing my good brushes for slime experiments.")],
    ],
    # session 5: F's camping trip (relative date); U's car
    [
        [E("So how was the camping trip? Did you survive?",
           L("Barely! We went camping in {f_camp} {when} and it rained the whole night, the tent "
             "leaked and {f_kid2} thought it was the best day of her life.", "f_camp",
             when="last_weekday")),
         E("Ha, kids love chaos. Did the whole family go?",
           L("All of us and the dog. {f_husband} slept through the whole storm, typical.",
             "f_storm"))],
        [E(L("My car died again on the way to work. This {u_car} is older than my nephew and it "
             "sounds like it.", "u_car1", facts=["u_transport"]),
           "Oh no, how old is it?"),
         E("Fourteen years. It's held together by stickers and hope.",
           "Honestly that's an achievement.")],
        [E("What are you painting at the moment?",
           L("Our dog asleep in the garden. He won't stay still, so it's mostly a brown blur with "
             "ears.", "f_paint_dog"))],
    ],
    # session 6: U meets someone (split + pronoun + relative date); F's band
    [
        [E(L("Okay so I have news. I went on a date {when}.", "u_date", when="last_weekday"),
           "Wait, WHAT? With who? Tell me everything!"),
         E(L("His name is {u_partner}. He's a chef at a little {u_cuisine} place near the "
             "station, so he cooks better than me, which is annoying.", "u_partner"),
           "A chef! Keep him, obviously."),
         E("We're going out again on Friday. Is it too soon to introduce him to you?",
           "It's never too soon. I need to vet him properly.")],
        [E("Anyway, enough about me. Anything new with you?",
           L("I joined a band! It's just some parents from school, but I play {f_instrument} and "
             "we rehearse on Tuesday nights in someone's garage.", "f_band")),
         E("You in a band! I need to come to a gig.", "First gig is a school fair, so lower your "
                                                   "expectations.")],
    ],
    # session 7: U's run for charity (yesterday); F's garden
    [
        [E(L("My legs are dead. I ran a 10k for {u_charity} {when} and raised nearly four hundred "
             "pounds!", "u_run", when="yesterday"),
           "That's brilliant, well done! How long did it take you?"),
         E("Just under an hour. I walked up the big hill, no shame.",
           "Zero shame. Hills are evil.")],
        [E("How's your garden doing?",
           L("Out of control. I grew {f_veg} this year and we have so many I'm leaving bags of "
             "them on the neighbours' doorsteps.", "f_veg")),
         E("Haha, guerrilla vegetable drops.", "It's a public service.")],
        [E(L("Also, {u_partner} cooked for me at his place {when}. Proper three courses.",
             "u_dinner", when="day_before_yesterday"),
           "Okay, he's definitely a keeper.")],
    ],
    # session 8: F's kid's arm (relative date); U's reading
    [
        [E("You sounded stressed in your message. Everything okay?",
           L("Mostly. {f_kid2} fell off the trampoline {when} and broke her wrist. She's in a "
             "bright purple cast and weirdly proud of it.", "f_wrist",
             when="day_before_yesterday")),
         E("Oh poor thing! Is she okay?", "She's fine, she's making everyone sign it.")],
        [E(L("I'm reading {u_book} at the moment, very slowly, two pages a night before I fall "
             "asleep.", "u_book"),
           L("Ha, same. I'm reading {f_book1} for my book club, we meet at the library once a "
             "month.", "f_book1", facts=["f_book"])),
         E("Any good?", "I'll tell you when I get past chapter three.")],
    ],
    # session 9: U quits the agency; F's mum
    [
        [E(L("I did it. I handed in my notice at {u_agency} {when}. I'm going freelance!",
             "u_notice", when="today"),
           "WHAT! That's huge! How do you feel?"),
         E("Terrified and excited. I've got two clients lined up already.",
           "You're going to be great. You've wanted this for years."),
         E("My boss was nice about it, actually. Said the door's always open.",
           "That's a good sign. Always leave on good terms.")],
        [E("How's your mum doing?",
           L("She's good. She still lives in {f_mum_town} in the house I grew up in, and she "
             "still won't let me buy her a dishwasher.", "f_mum")),
         E("Ha, classic mums.", "Honestly she'd wash the dishwasher by hand.")],
    ],
    # session 10: U's move (change); F sold a painting
    [
        [E(L("Guess what? I'm moving to {u_city2}! {u_partner} got offered a head chef job up "
             "there, and I can work from anywhere now.", "u_move_news", kind="change",
             facts=["u_city"]),
           "Oh wow, that's a big step! Are you nervous?"),
         E("A bit. But I'm excited too. New city, new everything.",
           "It'll be an adventure. I'll come and visit."),
         E("You'd better! I'll miss being a train ride away from you, though.",
           "Me too. But now I have an excuse for a city break.")],
        [E("Anything new with you?",
           L("I sold a painting! A woman bought my {f_lake} sunrise at the craft market {when}. "
             "I nearly cried.", "f_sold", when="yesterday")),
         E("No way! I thought it was on the landing wall!",
           L("It was, but she offered a hundred and twenty pounds and I panicked.",
             "f_price"))],
    ],
    # session 11: U's moving day; F's promotion
    [
        [E(L("Moving day was {when}. Everything hurts, but I can see the castle from my new "
             "bedroom window.", "u_moving_day", when="last_weekday"),
           "The castle! That's so romantic. How's {u_cat} coping?"),
         E("She's hiding under the bed and judging me.", "Fair enough, honestly.")],
        [E(L("Sold my {u_car} before the move, I'll just get an e-bike up here. Everything's "
             "close.", "u_ebike", kind="change", facts=["u_transport"]),
           "Good riddance to the car, honestly.")],
        [E("What about you, anything exciting?",
           L("Actually yes! I found out {when} that I got the deputy head job. I start after "
             "the summer, so no more full-time {f_subject} teaching.", "f_deputy",
             kind="change", facts=["f_job"], when="today")),
         E("Deputy head! That's amazing, congratulations!", "Thank you! I'm still in shock.")],
    ],
    # session 12: U's holiday plans; F's holiday plans
    [
        [E(L("{u_partner} and I booked a week in {u_trip1} for October! My {u_lang} is finally "
             "going to be useful.", "u_trip1", facts=["u_trip"]),
           L("Oh, jealous! We're taking the kids to {f_trip1} in August, our first proper "
             "holiday abroad with them.", "f_trip1", facts=["f_trip"])),
         E("Are the kids excited?", "{f_kid1} has already packed. Two months early.")],
        [E("What are you up to this weekend?",
           "Birthday party marathon. Three kids' parties in one day. Pray for me.")],
        [E(L("Also, I'm joining a climbing gym. My new neighbour dragged me along and I'm "
             "hooked.", "u_climb"),
           "You? Climbing? Who even are you now?")],
    ],
    # session 13: F's book club switch; F's holiday changes
    [
        [E("How's book club?",
           L("We gave up on {f_book1}, nobody could finish it. We're reading {f_book2} now and "
             "everyone actually likes it.", "f_book2", kind="change", facts=["f_book"]))],
        [E("Any holiday news?",
           L("Change of plan: {f_trip1} fell through, the flights got cancelled, so we're going "
             "to {f_trip2} instead.", "f_trip2", kind="change", facts=["f_trip"])),
         E("Oh no! But {f_trip2} sounds amazing too.", "It does, the kids are thrilled.")],
        [E(L("My brother's wedding is {when}! I'm doing a reading and I'm terrified.",
             "u_wedding", when="this_weekday"),
           "You'll be great. Just don't look at your mum or you'll cry."),
         E("Thanks. Are you nervous about starting the new job?",
           "A bit. Mostly about the staff meetings. I'll be the one running them!")],
    ],
    # session 14: U's trip changes; F's dog at the vet
    [
        [E(L("Bad news: {u_partner} can't get the time off in October, so we've swapped "
             "{u_trip1} for a long weekend in {u_trip2} instead.", "u_trip2", kind="change",
             facts=["u_trip"]),
           "Ah, that's a shame, but {u_trip2} is supposed to be gorgeous."),
         E("It is! Honestly I'm just glad to be going anywhere.", "Same energy.")],
        [E("How's {f_dog}?",
           L("Cheeky. He ate a sock {when}, we had to rush him to the vet. He's fine, the sock "
             "is not.", "f_sock", when="last_weekday")),
         E("Oh no, poor boy!", "Poor sock, more like.")],
        [E("We should plan a weekend together before the summer's over.",
           "Yes! You pick the date, my calendar is a disaster.")],
    ],
    # session 15: U's job (change); F's gig
    [
        [E(L("Freelancing update: one of my clients offered me a part-time contract designing "
             "packaging for their tea brand, so I'm half freelance, half tea.", "u_job2",
             kind="change", facts=["u_job"]),
           "Half tea! That's the dream job. Do you get free tea?"),
         E("So much free tea.", "Send some my way please.")],
        [E("Is {f_kid2}'s wrist better?",
           "The cast came off! She was devastated, she wanted to keep it forever.")],
        [E("How did the school fair gig go?",
           L("Great actually! We played the school fair {when}, and nobody threw anything at "
             "us.", "f_gig", when="last_weekday")),
         E("Do you have a band name yet?",
           L("Not yet. {f_husband} wants to call us The Lost Sock, after the dog's little "
             "adventure. No comment.", "f_band_name"))],
    ],
    # session 16: wrapping up; U's climbing, F's new job started
    [
        [E(L("I climbed my first proper wall {when}! The yellow route, the one everyone else "
             "does in five minutes.", "u_climb_route", when="yesterday"),
           "Still counts! Proud of you."),
         E("How's the new job shaping up?",
           L("Busy already! I'm not officially deputy head until September, but I'm doing all "
             "the timetables, which I never thought I'd enjoy.", "f_deputy_start",
             kind="change", facts=["f_job"])),
         E("Timetables! You've changed.", "I know. I even have a spreadsheet with colours.")],
        [E("I can't believe how much has changed this year.",
           "I know! New cities, new jobs, new hobbies. I'm proud of us.")],
    ],
]

# Every fact key a turn carries, whose it is ("user" or "assistant"), the value first stated and
# the value it changed to (or None). {date:label} is the resolved date of a relative one.
FACTS = {
    "u_job": ("user", "graphic designer at {u_agency}", "part-time packaging designer, freelance"),
    "u_city": ("user", "{u_city1}", "{u_city2}"),
    "u_pottery": ("user", "pottery class, signed up {date:u_pottery}", None),
    "u_pottery_day": ("user", "Thursday evenings", None),
    "u_cat_adopt": ("user", "{date:u_cat_adopt}", None),
    "u_cat_name": ("user", "{u_cat}, a tabby", None),
    "u_brother": ("user", "{u_brother}, engaged, a summer wedding", None),
    "u_lang": ("user", "{u_lang}", None),
    "u_transport": ("user", "a {u_car}", "an e-bike"),
    "u_date": ("user", "{date:u_date}", None),
    "u_partner": ("user", "{u_partner}, a chef", None),
    "u_run": ("user", "10k for {u_charity} on {date:u_run}", None),
    "u_dinner": ("user", "{date:u_dinner}", None),
    "u_book": ("user", "{u_book}", None),
    "u_notice": ("user", "{date:u_notice}", None),
    "u_moving_day": ("user", "{date:u_moving_day}", None),
    "u_trip": ("user", "{u_trip1} in October", "{u_trip2}"),
    "u_climb": ("user", "climbing gym", None),
    "u_wedding": ("user", "{date:u_wedding}", None),
    "u_climb_route": ("user", "{date:u_climb_route}", None),
    "f_kids": ("assistant", "{f_kid1} (9) and {f_kid2} (6)", None),
    "f_husband": ("assistant", "{f_husband}, a paramedic on nights", None),
    "f_paint": ("assistant", "watercolours; a sunrise over {f_lake} last year", None),
    "f_dog_got": ("assistant", "a terrier mix from the rescue", None),
    "f_dog_name": ("assistant", "{f_dog}", None),
    "f_job": ("assistant", "{f_subject} teacher at the primary", "deputy head"),
    "f_allergy": ("assistant", "{f_allergen}", None),
    "f_camp": ("assistant", "camping in {f_camp} on {date:f_camp}", None),
    "f_paint_wall": ("assistant", "the sunrise hung on her landing wall", None),
    "f_storm": ("assistant", "{f_husband} slept through the storm", None),
    "f_price": ("assistant", "a hundred and twenty pounds", None),
    "f_paint_dog": ("assistant", "painting the dog", None),
    "f_band": ("assistant", "{f_instrument} in a band, Tuesday nights", None),
    "f_veg": ("assistant", "{f_veg}", None),
    "f_wrist": ("assistant", "{f_kid2} broke her wrist on {date:f_wrist}", None),
    "f_book": ("assistant", "{f_book1}", "{f_book2}"),
    "f_mum": ("assistant", "{f_mum_town}", None),
    "f_sold": ("assistant", "sold the {f_lake} sunrise on {date:f_sold}", None),
    "f_trip": ("assistant", "{f_trip1} in August", "{f_trip2}"),
    "f_sock": ("assistant", "{date:f_sock}", None),
    "f_gig": ("assistant", "{date:f_gig}", None),
    "f_band_name": ("assistant", "The Lost Sock, {f_husband}'s idea, not agreed", None),
}

# Greetings that open a session and goodbyes that close it (U's line, F's line).
OPENERS = [
    ("Hey {F}! Good to see you! How have you been?", "Hey {U}! Good, busy as always. You?"),
    ("Hiya! Sorry I went quiet, this week has been a lot.", "Don't be silly! I've missed you."),
    ("Morning! Do you have five minutes?", "Always for you. Coffee's in hand, go."),
    ("Hey you! Finally, a free evening.", "Same! The kids are asleep, I'm all yours."),
    ("Hi! How's your week going?", "Honestly? Chaotic. But good chaotic."),
    ("Heyyy, long time no chat!", "I know! Life keeps happening."),
    ("Hello hello! Are you around?", "I'm here! Hiding in the kitchen with biscuits."),
    ("Hey {F}, got a minute?", "Course! What's up?"),
    ("Hi lovely! How are things?", "Good! Tired, but good. You?"),
    ("Okay, catch-up time. How are you?", "Yes please, I need a catch-up."),
    ("Hey! Is now a good time?", "Perfect time, I just sat down."),
    ("Hi {F}! Guess who finally has a free afternoon?", "You?! Tell me everything."),
    ("Hello stranger!", "Hello yourself! It's been too long."),
    ("Hey, how's your Sunday going?", "Lazy, in the best way. Yours?"),
    ("Morning {F}! Sorry, it's been a crazy couple of weeks.", "Same here. Good to hear from you!"),
    ("Hi hi! Ready for gossip?", "Always ready for gossip."),
    ("Hey! Are you free to chat?", "Yes! Kids are at their gran's for once."),
]
CLOSERS = [
    ("Anyway, I should run. Talk soon!", "Bye! Take care!"),
    ("Right, I need sleep. Night!", "Night night! Speak soon."),
    ("Ok I have to go, my pasta is boiling over. Love you!", "Go go go! Love you too."),
    ("Let's catch up again soon, yeah?", "Definitely. Same time next week?"),
    ("I'd better get back to work. Bye for now!", "Bye! Good luck with it all."),
    ("That's my lunch break over. Chat later!", "Later! Enjoy the afternoon."),
    ("Okay, bedtime for me. Give everyone a hug from me!", "Will do! Night!"),
    ("Talk soon, yeah? Miss you.", "Miss you too! Soon."),
    ("Oops, the doorbell. Speak later!", "Go! Bye!"),
    ("I'd better go and make dinner. Chat soon!", "Enjoy! Talk soon."),
    ("Okay, that's me. Have a good week!", "You too! Bye!"),
    ("Right, my battery is dying. Bye for now!", "Bye! Charge that phone."),
    ("Let's not leave it so long next time!", "Deal. Love you!"),
    ("Speak soon, and send photos!", "Will do! Bye!"),
    ("Anyway, I'll let you go. Night!", "Night! Sleep well."),
    ("Time for bed. This was nice!", "It was! Night night."),
]

# Small talk that states nothing probes ask about: self-contained pairs, placed between topics,
# many of them saying something and asking back.
SMALL_TALK = [
    ("Ugh, Mondays. How's your week starting?", "Slowly. Very slowly."),
    ("It's been raining nonstop here. Is it the same with you?",
     "Same, I've forgotten what the sun looks like."),
    ("Have you watched anything good lately?", "Nothing I'd recommend, I fall asleep by nine."),
    ("I had the strangest dream last night.", "Oh no, was it the teeth one again?"),
    ("I need a holiday from my holiday plans.", "Ha, I feel that."),
    ("Did you see the news about the heatwave?", "Yes! I'm not built for heat."),
    ("I've drunk four coffees today. Is that a lot?", "It explains the typing speed."),
    ("I keep meaning to call you and then it's midnight.", "Same, time just vanishes."),
    ("What are you having for dinner?", "Whatever's left in the fridge. Probably toast."),
    ("The supermarket was out of oat milk again.", "The great oat milk shortage continues."),
    ("My phone is on two percent, so if I vanish, that's why.", "Noted!"),
    ("I laughed so hard at the meme you sent.", "I knew you'd love it."),
    ("Do you ever just sit in the car for ten minutes before going inside?",
     "Every single day. Best ten minutes of my day."),
    ("Random, but I found our old school photo.", "Oh no, the fringe years."),
    ("It's so cold this week. Have you put the heating on yet?",
     "I'm holding out. Two jumpers, inside."),
    ("How's the weather with you?", "Grey, but at least it's dry."),
    ("I need new trainers, mine have a hole in them.", "Treat yourself, you deserve it."),
    ("I tried that recipe you sent, it was amazing.", "Told you! The lemon makes it."),
    ("Is it just me or is this year flying by?", "It's not just you, it's terrifying."),
    ("I should really go to bed earlier.", "Says everyone, every night."),
    ("Sorry, that was a long rant.", "Rant away, that's what I'm here for."),
    ("I saw a dog in a raincoat today.", "Stop, that's the best thing I've heard all week."),
    ("My neighbour is drilling again.", "At this point he must be building a second house."),
    ("Oh that reminds me, I owe you a coffee.", "You owe me about six coffees."),
    ("Traffic was horrible this morning. How was yours?", "Same. Everyone was late."),
    ("I'm trying to drink more water.", "How's that going? I always forget by lunchtime."),
    ("Got any plans for the bank holiday?", "Sleeping, hopefully."),
    ("I cleaned the whole place today. Feeling smug.", "As you should!"),
    ("Do you have any podcast recommendations? I'm bored of mine.",
     "Try a murder one. Everyone does eventually."),
    ("I finally fixed the wobbly chair. What did you do today?",
     "Laundry. Four loads. Thrilling stuff."),
    ("Have you heard from anyone from school lately?",
     "Only on birthdays. We should organise a reunion."),
    ("I think I'm getting a cold. Any tips?", "Honey, lemon, bed. In that order."),
    ("Why is every film three hours long now?", "Right? Nobody has three hours."),
    ("I burnt the toast again. How do you even do that in a toaster?",
     "Talent. Pure talent."),
    ("What's the best biscuit, final answer?", "Chocolate digestive. Not up for debate."),
    ("My plant is dying. Again.", "Too much water, probably. It's always too much water."),
    ("Did you end up watching that series everyone's talking about?",
     "Two episodes. Then I fell asleep. Classic me."),
    ("I bought a new mug and I love it more than is reasonable.", "A good mug changes lives."),
    ("Was your weekend busy?", "Busy, but the good kind."),
    ("I'm so tired today, I put the milk in the cupboard.", "Ha, been there."),
    ("The sunset tonight was unreal.", "I saw it! All pink and orange."),
    ("How do people have time to go to the gym before work?", "They're not human, that's how."),
    ("I've been listening to the same song on repeat all week.", "Send it! I need new music."),
    ("Is it weird to have cereal for dinner?", "Not at all. It's a balanced meal if you add a "
                                             "banana."),
    ("I found a tenner in my coat pocket.", "Best feeling in the world."),
    ("My hair is doing its own thing today.", "Let it. It's probably happier that way."),
    ("Any good books I should read next?", "Anything short. Life's busy."),
    ("It's finally warm enough to sit outside.", "Yes! Coffee in the sun, at last."),
]
# A reaction to what the other friend just told (placed after a topic that ends with F's news).
REACT_TO_FRIEND = [
    ("Wow, that's awesome!", "I know, right?"),
    ("Haha, that's so you.", "Guilty."),
    ("Aww, that's so sweet.", "I know, I nearly melted."),
    ("Ha! Classic.", "Honestly, every time."),
    ("That's wild.", "I still can't believe it."),
    ("I love that for you.", "Thank you! I love it for me too."),
    ("Wait, really?", "Really!"),
    ("That's hilarious.", "I thought you'd like that."),
    ("Oh my god. Amazing.", "It really was."),
    ("Ha, brilliant.", "Right?"),
]
# The teller, still on her own news (placed after a topic that ends with U's news).
REACT_TO_SELF = [
    ("I know! I'm still buzzing.", "You should be!"),
    ("Thanks, that means a lot.", "Always."),
    ("Right? I couldn't believe it either.", "Honestly, good for you."),
    ("Anyway, that's my news.", "Big news! I love it."),
    ("Sorry, I'm going on and on.", "Don't be silly, I asked!"),
    ("I'll keep you posted.", "You'd better!"),
    ("Haha, we'll see how it goes.", "It'll go great."),
]


# --- the probes --------------------------------------------------------------------------------
# (category, question, evidence labels, expects, answer, extra)
#   expects: words that carry the answer; every one appears in the evidence turns' text
#   extra: {"date": label} for temporal ones, {"outdated": [...], "superseded": [labels]} for
#          updated facts, {"tempting": [...], "about": "user"/"assistant"} for unanswerable ones
P = [
    # single-hop: about U
    ("single-hop", "What does {U} do for work at {u_agency}?", ["u_intro"], ["graphic design"],
     "graphic design", {}),
    ("single-hop", "What class did {U} sign up for?", ["u_pottery"], ["pottery"], "pottery", {}),
    ("single-hop", "When does {U}'s pottery class meet?", ["u_pottery_day"],
     ["Thursday evenings"], "Thursday evenings", {}),
    ("single-hop", "What is the name of {U}'s cat?", ["u_cat_adopt", "u_cat_name"], ["{u_cat}"],
     "{u_cat}", {}),
    ("single-hop", "What kind of cat did {U} adopt?", ["u_cat_adopt", "u_cat_name"], ["tabby"],
     "a tabby", {}),
    ("single-hop", "What's my cat called?", ["u_cat_adopt", "u_cat_name"], ["{u_cat}"],
     "{u_cat}", {}),
    ("single-hop", "What is {U}'s brother called?", ["u_brother"], ["{u_brother}"],
     "{u_brother}", {}),
    ("single-hop", "What are {U}'s brother and his fiancée arguing about?", ["u_brother"],
     ["playlist"], "the wedding playlist", {}),
    ("single-hop", "Which language is {U} learning?", ["u_lang"], ["{u_lang}"], "{u_lang}", {}),
    ("single-hop", "What language am I learning?", ["u_lang"], ["{u_lang}"], "{u_lang}", {}),
    ("single-hop", "What is the name of the man {U} started dating?", ["u_date", "u_partner"],
     ["{u_partner}"], "{u_partner}", {}),
    ("single-hop", "What does {U}'s boyfriend do for a living?", ["u_date", "u_partner"],
     ["chef"], "he's a chef", {}),
    ("single-hop", "What kind of restaurant does {u_partner} work at?", ["u_partner"],
     ["{u_cuisine}"], "a little {u_cuisine} place", {}),
    ("single-hop", "Who did {U} run a 10k for?", ["u_run"], ["{u_charity}"], "{u_charity}", {}),
    ("single-hop", "How much money did {U} raise with her run?", ["u_run"],
     ["four hundred"], "nearly four hundred pounds", {}),
    ("single-hop", "What book is {U} reading?", ["u_book"], ["{u_book}"], "{u_book}", {}),
    ("single-hop", "What book am I reading before bed?", ["u_book"], ["{u_book}"], "{u_book}",
     {}),
    ("single-hop", "What new sport did {U} take up?", ["u_climb"], ["climbing"], "climbing",
     {}),
    ("single-hop", "What can {U} see from her new bedroom window?", ["u_moving_day"],
     ["castle"], "the castle", {}),
    # single-hop: about F
    ("single-hop", "What did {F} paint last year?", ["f_paint"], ["sunrise", "{f_lake}"],
     "a sunrise over {f_lake}", {}),
    ("single-hop", "When does {F} paint?", ["f_paint"], ["Sunday morning"],
     "every Sunday morning", {}),
    ("single-hop", "What are the names of {F}'s kids?", ["f_kids"], ["{f_kid1}", "{f_kid2}"],
     "{f_kid1} and {f_kid2}", {}),
    ("single-hop", "How old is {f_kid1}?", ["f_kids"], ["nine"], "nine", {}),
    ("single-hop", "What does {F}'s husband do?", ["f_husband"], ["paramedic"],
     "he's a paramedic", {}),
    ("single-hop", "What is {F}'s dog called?", ["f_dog_got", "f_dog_name"], ["{f_dog}"],
     "{f_dog}", {}),
    ("single-hop", "What's the name of your dog?", ["f_dog_got", "f_dog_name"], ["{f_dog}"],
     "{f_dog}", {}),
    ("single-hop", "What breed is {F}'s dog?", ["f_dog_got"], ["terrier"],
     "a terrier mix", {}),
    ("single-hop", "What is {F} allergic to?", ["f_allergy"], ["{f_allergen}"],
     "{f_allergen}", {}),
    ("single-hop", "Where did {F}'s family go camping?", ["f_camp"], ["{f_camp}"], "{f_camp}",
     {}),
    ("single-hop", "What instrument does {F} play in her band?", ["f_band"],
     ["{f_instrument}"], "{f_instrument}", {}),
    ("single-hop", "When does {F}'s band rehearse?", ["f_band"], ["Tuesday nights"],
     "Tuesday nights", {}),
    ("single-hop", "What vegetables did {F} grow this year?", ["f_veg"], ["{f_veg}"],
     "{f_veg}", {}),
    ("single-hop", "Where does {F}'s mum live?", ["f_mum"], ["{f_mum_town}"], "{f_mum_town}",
     {}),
    ("single-hop", "What won't {F}'s mum let her buy?", ["f_mum"], ["dishwasher"],
     "a dishwasher", {}),
    ("single-hop", "How much did {F} sell her painting for?", ["f_sold", "f_price"],
     ["hundred and twenty"], "a hundred and twenty pounds", {}),
    ("single-hop", "What did {F}'s dog eat?", ["f_sock"], ["sock"], "a sock", {}),
    ("single-hop", "Where does {F}'s book club meet?", ["f_book1"], ["library"],
     "at the library", {}),
    ("single-hop", "How long had {F} been teaching?", ["f_job1"], ["eight years"],
     "eight years", {}),
    ("single-hop", "Where did {F}'s band play their first gig?", ["f_gig"],
     ["school fair"], "at the school fair", {}),
    # multi-hop
    ("multi-hop", "Which of {F}'s kids broke her wrist, and how old is she?",
     ["f_kids", "f_wrist"], ["{f_kid2}", "six"], "{f_kid2}, who is six", {}),
    ("multi-hop", "What pets do {U} and {F} have?",
     ["u_cat_adopt", "u_cat_name", "f_dog_got", "f_dog_name"], ["cat", "{u_cat}", "{f_dog}"],
     "{U} has a cat, {u_cat}; {F} has a dog, {f_dog}", {}),
    ("multi-hop", "Why is {U} moving to {u_city2}?", ["u_partner", "u_move_news"],
     ["head chef", "{u_partner}"], "{u_partner} got a head chef job there", {}),
    ("multi-hop", "Which painting did {F} sell at the craft market?", ["f_paint", "f_sold"],
     ["{f_lake}", "sunrise"], "the {f_lake} sunrise she painted last year", {}),
    ("multi-hop", "Where was the painting {F} sold hanging before?", ["f_paint_wall", "f_sold"],
     ["landing wall", "{f_lake}"], "on her landing wall", {}),
    ("multi-hop", "Who in {F}'s family slept through the storm while camping?",
     ["f_camp", "f_storm"], ["{f_husband}", "camping"], "{f_husband}, her husband", {}),
    ("multi-hop", "What did {F} teach before she became deputy head?",
     ["f_job1", "f_deputy"], ["{f_subject}", "deputy head"], "{f_subject}", {}),
    ("multi-hop", "What language will {U} practise on her trip, and where was she first going?",
     ["u_lang", "u_trip1"], ["{u_lang}", "{u_trip1}"], "{u_lang}; {u_trip1}", {}),
    ("multi-hop", "Which company did {U} leave to go freelance?", ["u_intro", "u_notice"],
     ["{u_agency}", "freelance"], "{u_agency}", {}),
    ("multi-hop", "Who cooked {U} a three-course dinner, and what's his job?",
     ["u_partner", "u_dinner"], ["{u_partner}", "chef"], "{u_partner}, a chef", {}),
    ("multi-hop", "What did {F}'s husband suggest as a band name, and why is it funny?",
     ["f_sock", "f_band_name"], ["Lost Sock", "ate a sock"],
     "The Lost Sock: their dog ate a sock", {}),
    ("multi-hop", "Which city did {U} live in before she moved to the city with the castle?",
     ["u_intro", "u_moving_day"], ["{u_city1}", "castle"], "{u_city1}", {}),
    ("multi-hop", "Who are the people in {F}'s family?", ["f_kids", "f_husband", "f_dog_name"],
     ["{f_kid1}", "{f_kid2}", "paramedic", "{f_dog}"],
     "husband {f_husband}, kids {f_kid1} and {f_kid2}, dog {f_dog}", {}),
    ("multi-hop", "Which hobbies has {U} taken up?", ["u_pottery", "u_climb"],
     ["pottery", "climbing"], "pottery and climbing", {}),
    ("multi-hop", "Which of the friends has a child with a purple cast?", ["f_wrist"],
     ["purple cast", "{f_kid2}"], "{F} ({f_kid2})", {}),
    ("multi-hop", "What did {U} sell before moving, and what will she use instead?",
     ["u_car1", "u_ebike"], ["{u_car}", "e-bike"], "her {u_car}; an e-bike", {}),
    ("multi-hop", "Which friend is allergic to something, and what?", ["f_allergy"],
     ["{f_allergen}"], "{F}, {f_allergen}", {}),
    ("multi-hop", "What is {F} painting at the moment, and what's its name?",
     ["f_paint_dog", "f_dog_name"], ["dog", "{f_dog}"], "her dog {f_dog}", {}),
    # temporal
    ("temporal", "When did {U} sign up for her pottery class?", ["u_pottery"],
     ["pottery", "{when:u_pottery}"], "{date:u_pottery}", {"date": "u_pottery"}),
    ("temporal", "When did {U} adopt her cat?", ["u_cat_adopt"],
     ["adopted", "{when:u_cat_adopt}"], "{date:u_cat_adopt}", {"date": "u_cat_adopt"}),
    ("temporal", "In which month did I adopt my cat?", ["u_cat_adopt"],
     ["adopted", "{when:u_cat_adopt}"], "{month:u_cat_adopt}", {"date": "u_cat_adopt"}),
    ("temporal", "When did {F}'s family go camping?", ["f_camp"],
     ["camping", "{when:f_camp}"], "{date:f_camp}", {"date": "f_camp"}),
    ("temporal", "When did {U} go on her first date with {u_partner}?", ["u_date"],
     ["date", "{when:u_date}"], "{date:u_date}", {"date": "u_date"}),
    ("temporal", "On which day of the week did {U} run her 10k?", ["u_run"],
     ["10k", "{when:u_run}"], "{weekday:u_run}", {"date": "u_run"}),
    ("temporal", "When did {U} run the 10k?", ["u_run"], ["10k", "{when:u_run}"],
     "{date:u_run}", {"date": "u_run"}),
    ("temporal", "When did {u_partner} cook {U} a three-course dinner?", ["u_dinner"],
     ["cooked", "{when:u_dinner}"], "{date:u_dinner}", {"date": "u_dinner"}),
    ("temporal", "When did {f_kid2} break her wrist?", ["f_wrist"],
     ["broke", "{when:f_wrist}"], "{date:f_wrist}", {"date": "f_wrist"}),
    ("temporal", "When did {U} hand in her notice?", ["u_notice"],
     ["notice", "{when:u_notice}"], "{date:u_notice}", {"date": "u_notice"}),
    ("temporal", "When did {F} sell her painting?", ["f_sold"],
     ["craft market", "{when:f_sold}"], "{date:f_sold}", {"date": "f_sold"}),
    ("temporal", "When was {U}'s moving day?", ["u_moving_day"],
     ["Moving day", "{when:u_moving_day}"], "{date:u_moving_day}", {"date": "u_moving_day"}),
    ("temporal", "In which month did {U} move?", ["u_moving_day"],
     ["Moving day", "{when:u_moving_day}"], "{month:u_moving_day}", {"date": "u_moving_day"}),
    ("temporal", "When did {F} find out she got the deputy head job?", ["f_deputy"],
     ["deputy head", "{when:f_deputy}"], "{date:f_deputy}", {"date": "f_deputy"}),
    ("temporal", "When was {U}'s brother's wedding?", ["u_wedding"],
     ["wedding", "{when:u_wedding}"], "{date:u_wedding}", {"date": "u_wedding"}),
    ("temporal", "When did {F}'s dog eat a sock?", ["f_sock"],
     ["sock", "{when:f_sock}"], "{date:f_sock}", {"date": "f_sock"}),
    ("temporal", "When did {F}'s band play the school fair?", ["f_gig"],
     ["school fair", "{when:f_gig}"], "{date:f_gig}", {"date": "f_gig"}),
    ("temporal", "When did I climb my first proper wall?", ["u_climb_route"],
     ["climbed", "{when:u_climb_route}"], "{date:u_climb_route}", {"date": "u_climb_route"}),
    # updated fact: the newest value
    ("updated-fact", "Where does {U} live now?", ["u_move_news", "u_moving_day"],
     ["{u_city2}"], "{u_city2}", {"outdated": ["{u_city1}"], "superseded": ["u_intro"]}),
    ("updated-fact", "Which city do I live in?", ["u_move_news", "u_moving_day"],
     ["{u_city2}"], "{u_city2}", {"outdated": ["{u_city1}"], "superseded": ["u_intro"]}),
    ("updated-fact", "What does {U} do for work now?", ["u_job2"], ["packaging"],
     "part-time packaging design for a tea brand, plus freelance",
     {"outdated": ["{u_agency}"], "superseded": ["u_intro"]}),
    ("updated-fact", "Is {U} still at {u_agency}?", ["u_notice", "u_job2"],
     ["freelance", "packaging"], "no: she went freelance and designs tea packaging",
     {"outdated": ["still doing graphic design"], "superseded": ["u_intro"]}),
    ("updated-fact", "How does {U} get around these days?", ["u_ebike"], ["e-bike"],
     "an e-bike", {"outdated": ["{u_car}"], "superseded": ["u_car1"]}),
    ("updated-fact", "Does {U} still drive her {u_car}?", ["u_ebike"], ["Sold", "e-bike"],
     "no, she sold it; an e-bike", {"outdated": ["car died"], "superseded": ["u_car1"]}),
    ("updated-fact", "Where are {U} and {u_partner} going on holiday?", ["u_trip2"],
     ["{u_trip2}"], "{u_trip2}", {"outdated": ["{u_trip1}"], "superseded": ["u_trip1"]}),
    ("updated-fact", "Where am I going on holiday with {u_partner}?", ["u_trip2"],
     ["{u_trip2}"], "{u_trip2}", {"outdated": ["{u_trip1}"], "superseded": ["u_trip1"]}),
    ("updated-fact", "What is {F}'s job now?", ["f_deputy"], ["deputy head"], "deputy head",
     {"outdated": ["teaching {f_subject}"], "superseded": ["f_job1"]}),
    ("updated-fact", "Is {F} still teaching {f_subject} full-time?", ["f_deputy"],
     ["deputy head"], "no, she's the deputy head now",
     {"outdated": ["teaching {f_subject}"], "superseded": ["f_job1"]}),
    ("updated-fact", "What's your job these days?", ["f_deputy", "f_deputy_start"],
     ["deputy head"], "deputy head",
     {"outdated": ["teaching {f_subject}"], "superseded": ["f_job1"]}),
    ("updated-fact", "Where is {F}'s family going on holiday?", ["f_trip2"], ["{f_trip2}"],
     "{f_trip2}", {"outdated": ["{f_trip1}"], "superseded": ["f_trip1"]}),
    ("updated-fact", "Where are you taking the kids this summer?", ["f_trip2"], ["{f_trip2}"],
     "{f_trip2}", {"outdated": ["{f_trip1}"], "superseded": ["f_trip1"]}),
    ("updated-fact", "What is {F}'s book club reading now?", ["f_book2"], ["{f_book2}"],
     "{f_book2}", {"outdated": ["{f_book1}"], "superseded": ["f_book1"]}),
    ("updated-fact", "Which book is your book club on at the moment?", ["f_book2"],
     ["{f_book2}"], "{f_book2}", {"outdated": ["{f_book1}"], "superseded": ["f_book1"]}),
    # unanswerable: never stated; the right outcome is "I don't know"
    ("unanswerable", "What is {U}'s dog called?", [], [], None,
     {"tempting": ["{f_dog}"], "about": "user"}),
    ("unanswerable", "What is {F}'s cat's name?", [], [], None,
     {"tempting": ["{u_cat}"], "about": "assistant"}),
    ("unanswerable", "How many children does {U} have?", [], [], None,
     {"tempting": ["{f_kid1}", "{f_kid2}"], "about": "user"}),
    ("unanswerable", "What is the name of {U}'s brother's fiancée?", [], [], None,
     {"tempting": ["{u_brother}"], "about": "user"}),
    ("unanswerable", "What instrument does {U} play?", [], [], None,
     {"tempting": ["{f_instrument}"], "about": "user"}),
    ("unanswerable", "What is {F} allergic to besides {f_allergen}?", [], [], None,
     {"tempting": ["{f_allergen}"], "about": "assistant"}),
    ("unanswerable", "Where did {F} go to university?", [], [], None,
     {"tempting": ["{f_mum_town}"], "about": "assistant"}),
    ("unanswerable", "What does {U}'s brother do for work?", [], [], None,
     {"tempting": ["paramedic", "chef"], "about": "user"}),
    ("unanswerable", "What car does {F} drive?", [], [], None,
     {"tempting": ["{u_car}"], "about": "assistant"}),
    ("unanswerable", "What is {u_partner}'s restaurant called?", [], [], None,
     {"tempting": ["{u_cuisine}"], "about": "user"}),
    ("unanswerable", "What was the name of my pottery teacher?", [], [], None,
     {"tempting": ["pottery"], "about": "user"}),
    ("unanswerable", "How old is {U}?", [], [], None,
     {"tempting": ["nine", "six"], "about": "user"}),
    ("unanswerable", "Which tea brand does {U} design packaging for?", [], [], None,
     {"tempting": ["{u_agency}"], "about": "user"}),
    ("unanswerable", "What did {F}'s kids dress up as for the school fair?", [], [], None,
     {"tempting": ["{f_kid1}", "{f_kid2}"], "about": "assistant"}),
    ("unanswerable", "What's the name of your mum?", [], [], None,
     {"tempting": ["{f_mum_town}"], "about": "assistant"}),
    ("unanswerable", "Where did {U} and {u_partner} have their first date?", [], [], None,
     {"tempting": ["{u_cuisine}"], "about": "user"}),
    ("unanswerable", "What colour is {F}'s tent?", [], [], None,
     {"tempting": ["purple"], "about": "assistant"}),
]


def person(question: str, values: dict[str, str]) -> str:
    """How a probe refers to the friends: "third" (by name), "first" ("my": the user, who asks),
    "second" ("your": the other friend) or "none" (someone else by name, "How old is Maya?")."""
    if re.search(rf"\b(?:{values['U']}|{values['F']})\b", question):
        return "third"
    if re.search(r"\b(?:I|I'm|my|me|am)\b", question):
        return "first"
    if re.search(r"\b(?:you|your)\b", question):
        return "second"
    return "none"


# --- the generator -----------------------------------------------------------------------------

EXCHANGES_PER_SESSION = 13  # 26 turns a session, greeting and goodbye included


def generate(seed: int = 7) -> dict:
    """Build the conversation dict (format: data/evaluation/README.md)."""
    rng = random.Random(seed)
    values = pick_values(rng)

    # session dates: from a fixed start, 7-12 days apart; the probe session 10-20 days later
    start = dt.date(2025, 3, 1) + dt.timedelta(days=rng.randint(0, 6))
    dates = [start]
    for _ in range(len(STORY) - 1):
        dates.append(dates[-1] + dt.timedelta(days=rng.randint(7, 12)))
    dates.append(dates[-1] + dt.timedelta(days=rng.randint(10, 20)))

    turns: list[dict] = []
    labels: dict[str, str] = {}  # label -> turn id
    events: dict[str, tuple[str, dt.date]] = {}
    openers = rng.sample(OPENERS, len(OPENERS))
    closers = rng.sample(CLOSERS, len(CLOSERS))
    cycles = {name: rng.sample(pool, len(pool)) for name, pool in
              (("small", SMALL_TALK), ("friend", REACT_TO_FRIEND), ("self", REACT_TO_SELF))}
    used = dict.fromkeys(cycles, 0)

    def add(session: int, speaker: str, text: str, kind: str, facts=()) -> str:
        turn_id = f"t{len(turns) + 1:03d}"
        turns.append({"id": turn_id, "session_id": f"session-{session}",
                      "date": dates[session - 1].isoformat(), "speaker": speaker,
                      "text": text, "kind": kind, "facts": list(facts)})
        return turn_id

    for number, blocks in enumerate(STORY, start=1):
        day = dates[number - 1]
        story_exchanges = sum(len(b) for b in blocks)
        # story blocks keep their order; small talk goes in between at random places, and
        # right after a topic often a reaction to it ("Wow, that's awesome!")
        order = EXCHANGES_PER_SESSION - 2 - story_exchanges + len(blocks)
        positions = sorted(rng.sample(range(order), len(blocks)))
        if number == 1:  # the first session starts by answering the greeting
            positions = [0, *sorted(rng.sample(range(1, order), len(blocks) - 1))]
        mixed: list = [None] * order
        for position, block in zip(positions, blocks, strict=True):
            mixed[position] = block
        for i, block in enumerate(mixed):
            if block is not None:
                continue
            before = mixed[i - 1] if i else None
            pool = "small"
            if any(before is b for b in blocks) and rng.random() < 0.6:
                u, a = before[-1]
                if a["kind"] != "filler":
                    pool = "friend"
                elif u["kind"] != "filler":
                    pool = "self"
            mixed[i] = [E(*cycles[pool][used[pool] % len(cycles[pool])])]
            used[pool] += 1
        hello = openers[(number - 1) % len(openers)]
        bye = closers[(number - 1) % len(closers)]
        mixed = [[E(*hello)], *mixed, [E(*bye)]]
        for block in mixed:
            for exchange in block:
                for speaker, line in zip(("user", "assistant"), exchange, strict=True):
                    text = line["text"]
                    if line["when"]:
                        phrase, when = resolve_when(line["when"], day, rng)
                        events[line["label"]] = (phrase, when)
                        text = text.replace("{when}", phrase)
                    turn_id = add(number, speaker, fill(text, values), line["kind"],
                                  line["facts"])
                    if line["label"]:
                        labels[line["label"]] = turn_id

    # the probe session: every probe once, in a seeded order; the model answers them
    probe_session = len(STORY) + 1
    speaker_of = {t["id"]: t["speaker"] for t in turns}
    probes = build_probes(rng, P, values, events, labels, speaker_of,
                          lambda q: add(probe_session, "user", q, "probe"), lambda q: person(q, values))

    sessions = [{"id": f"session-{i}", "date": d.isoformat(), "weekday": WEEKDAYS[d.weekday()]}
                for i, d in enumerate(dates, start=1)]
    history = [t for t in turns if t["kind"] != "probe"]
    counts = {c: sum(p["category"] == c for p in probes) for c in CATEGORIES}
    data = {
        "id": "friends_conversation",
        "seed": seed,
        "language": "en",
        "user_id": values["U"].lower(),
        "description": (
            f"{len(history)} turns of two friends, {values['U']} (user) and {values['F']} "
            f"(assistant), over {len(STORY)} dated sessions, then {len(probes)} probe questions "
            f"in session {probe_session}: " + ", ".join(f"{n} {c}" for c, n in counts.items())
            + ". Both state facts about themselves, in passing, split over turns, by pronoun "
            "and relative date, some changed later; probes ask about both, mostly by name."),
        "system": (f"The chat below is between two friends: the user's messages are "
                   f"{values['U']}'s, the assistant's are {values['F']}'s. Answer questions "
                   "about either of them briefly, from the chat; if it was never said, say you "
                   "don't know."),
        "speakers": {"user": values["U"], "assistant": values["F"]},
        "sessions": sessions,
        "facts": {key: {"speaker": who, "value": fill(value, values, events),
                        "changed_to": fill(changed, values, events) if changed else None}
                  for key, (who, value, changed) in FACTS.items()},
        "values": values,
        "turns": turns,
        "probes": probes,
    }
    self_check(data)
    return data


def self_check(data: dict) -> None:
    """What data/evaluation/README.md promises about this file; raises AssertionError if not."""
    turns = {t["id"]: t for t in data["turns"]}
    history = [t for t in data["turns"] if t["kind"] != "probe"]
    probes = data["probes"]
    assert len(history) >= 400, len(history)
    assert len(data["sessions"]) - 1 >= 15
    assert len(probes) >= 100, len(probes)
    assert [t["speaker"] for t in history] == ["user", "assistant"] * (len(history) // 2)
    last = data["sessions"][-1]["id"]
    assert all(t["session_id"] == last and t["speaker"] == "user"
               for t in data["turns"] if t["kind"] == "probe")
    assert all(t["session_id"] != last for t in history)
    assert {p["category"] for p in probes} == set(CATEGORIES)
    missing = []
    for p in probes:
        assert turns[p["turn_id"]]["text"] == p["question"]
        if p["category"] == "unanswerable":
            assert p["evidence"] == [] and p["expects"] == [] and "tempting" in p, p
            continue
        assert p["evidence"] and p["expects"], p
        text = " ".join(turns[i]["text"] for i in p["evidence"]).lower()
        missing += [(p["question"], w) for w in p["expects"] if w.lower() not in text]
        assert all(turns[i]["kind"] != "probe" for i in p["evidence"])
    assert not missing, f"expected words not in the evidence turns: {missing}"
    answerable = [p for p in probes if p["expects"]]
    from_friend = sum(any(turns[i]["speaker"] == "assistant" for i in p["evidence"])
                      for p in answerable)
    from_user = sum(any(turns[i]["speaker"] == "user" for i in p["evidence"])
                    for p in answerable)
    assert from_friend >= 0.35 * len(answerable), (from_friend, len(answerable))
    assert from_user >= 0.35 * len(answerable), (from_user, len(answerable))
    third = sum(p["person"] == "third" for p in probes)
    assert third > len(probes) / 2, third


def main(argv: list[str] | None = None) -> int:
    return run_cli(argv, generate, DEFAULT_OUT, "make_friends_conversation.py", __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
