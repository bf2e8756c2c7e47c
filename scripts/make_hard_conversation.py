"""Generate the hard evaluation conversation (lessons 07-08) from a seed.

    python scripts/make_hard_conversation.py            # writes data/evaluation/hard_conversation.json
    python scripts/make_hard_conversation.py --check    # exit 1 if the committed file differs
    python scripts/make_hard_conversation.py --seed 3 --out /tmp/other.json

Unlike the easy conversation (``make_long_conversation.py``, one crisp first-person sentence per
fact), this one is written the way people talk: a user (Mina) and the assistant, 18 dated sessions
of chat plus a final session of probe questions. Facts are stated in passing ("Been teaching maths
at Hanbit Middle School for six years now"), split over two of the user's turns ("I adopted a
dog" ... "We named her Luna"), referred to with pronouns ("He's pulling all-nighters at the firm")
and relative dates ("last Thursday", resolved from the session's date), and changed later (a move,
a new job). Small talk fills the gaps, and the user asks questions that look like the later probes
but do not answer them ("What are popular dog names in Korea?").

The story is fixed; the seed picks the names and values (which city, which dog name, ...), the
session dates, where the filler goes and the order of the probes. Same seed, same bytes. The
format is documented in data/evaluation/README.md.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # run as a script or loaded by path
from conversation_cli import WEEKDAYS, fill, render, resolve_when, run_cli  # noqa: E402, F401

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "data/evaluation/hard_conversation.json"

# The seed picks one value per slot. Values of one slot never appear in another slot's pool.
POOLS = {
    "sister": ["Jiwoo", "Seoyeon", "Eunji", "Hayoung"],
    "partner": ["Daniel", "Junho", "Minjae", "Taeo"],
    "friend": ["Hyejin", "Soojin", "Yerin"],
    "cat": ["Nabi", "Gureum", "Tofu"],
    "dog": ["Luna", "Hodu", "Sori", "Maru"],
    "city1": ["Daejeon", "Gwangju", "Daegu"],
    "city2": ["Busan", "Gangneung", "Yeosu"],
    "hometown": ["Jeonju", "Andong", "Gyeongju"],
    "subject": ["maths", "science", "history"],
    "school": ["Hanbit", "Saebom", "Dongsan"],
    "company": ["Brightpath", "Learnloop", "Classwise"],
    "food": ["naengmyeon", "tteokbokki", "dakgalbi", "kalguksu"],
    "trip": [("Lisbon", "Portuguese"), ("Mexico City", "Spanish"), ("Kyoto", "Japanese")],
    "trip2": ["Hokkaido", "Hanoi", "Taipei"],
    "phones": [("Galaxy", "Pixel"), ("Pixel", "iPhone"), ("iPhone", "Galaxy")],
    "instrument": ["cello", "violin", "clarinet"],
    "allergen": ["shrimp", "peanuts", "crab"],
    "nephew": ["Doyun", "Siwoo", "Haram"],
    "age": ["31", "34", "36"],
    "guitar": ["guitar", "ukulele", "bass"],
}


def pick_values(rng: random.Random) -> dict[str, str]:
    v = {k: rng.choice(pool) for k, pool in POOLS.items()}
    v["trip1"], v["lang"] = v.pop("trip")
    v["phone1"], v["phone2"] = v.pop("phones")
    return v


# --- the story ---------------------------------------------------------------------------------
# A session is a list of blocks; a block is a list of exchanges kept together (a fact split over
# two user turns is one block of two exchanges). An exchange is a dict:
#   u: the user's line, a: the assistant's reply, label: a name probes refer to (optional),
#   facts: fact keys the user's line carries, kind: fact / change / question / chat,
#   when: a relative date in the user's line ({when} in u), resolved against the session date.


def X(u, a, label=None, facts=(), kind="fact", when=None):  # noqa: N802 (a table constructor)
    return {"u": u, "a": a, "label": label, "facts": list(facts), "kind": kind, "when": when}


def Q(u, a):  # noqa: N802 - a question resembling a later probe that does not answer it
    return X(u, a, kind="question")


STORY = [
    # session 1: name, job, city, commute
    [
        [X("Hi! I'm Mina, by the way. Figured you should know who keeps asking you things.",
           "Nice to meet you, Mina! What can I help with today?", "name", ["name"])],
        [X("Long day. Been teaching {subject} at {school} Middle School for six years now and "
           "the first week back never gets easier.",
           "That's a long stretch, and the first week back is always a lot. Anything I can take "
           "off your plate?", "job1", ["job", "subject", "school", "years_teaching"])],
        [X("The subway here in {city1} is a joke compared to Seoul, but at least I always get a "
           "seat.", "Ha, the upside of a smaller network. Is your commute long?", "city1", ["city"]),
         X("Twenty minutes on the 102 bus, door to door.", "That's not bad at all.",
           "commute1", ["commute"])],
        [Q("What's a good job for someone who loves kids but is tired of classrooms?",
           "A few directions: children's librarian, museum education, speech therapy assistant, "
           "or writing for children's media.")],
    ],
    # session 2: sister (split, pronoun), allergy
    [
        [X("My older sister {sister} came over for dinner last night.",
           "That sounds nice! Are you two close?", "sister", ["sister"]),
         X("Very. She's a nurse on the children's ward, so she's on night shifts most of this "
           "month, poor thing.", "Night shifts are brutal. I hope she gets some rest in between.",
           "sister_job", ["sister_job"])],
        [X("Had to send my bibimbap back at lunch because they'd put {allergen} in it, and I'm "
           "not spending another night in the ER with my throat closing up.",
           "That sounds frightening. Good call sending it back.", "allergy", ["allergy"])],
        [Q("What are the most common food allergies in adults?",
           "Shellfish, fish, tree nuts and milk are among the most common in adults.")],
        [Q("Thinking about adopting a dog. What are popular dog names in Korea?",
           "Bori, Kongi, Choco, Dubu and Mango come up a lot.")],
    ],
    # session 3: the dog (split), adoption date
    [
        [X("I finally did it: I adopted a dog from the shelter {when}!",
           "Congratulations, that's huge! Is it a he or a she? And what's the name?",
           "dog_adopt", ["dog", "dog_adopted"], when="last_weekday"),
         X("A she! We named her {dog}. She's a jindo mix, the vet thinks about two years old.",
           "What a lovely name. Jindo mixes are loyal and a little independent. Enjoy her!",
           "dog_name", ["dog", "dog_breed"])],
        [Q("What's the name of that famous dog statue in Tokyo?",
           "That's Hachiko, at Shibuya Station.")],
    ],
    # session 4: instrument, hobby
    [
        [X("My fingers are sore. I dug my old {instrument} out of the closet and practised for an "
           "hour.", "Welcome back to it! How long since you last played?", "instrument",
           ["instrument"]),
         X("Since uni, honestly. I used to play in the orchestra there.",
           "Then it'll come back faster than you think.", "orchestra", ["instrument"])],
        [X("Signed up for a pottery class on Saturday mornings. My first bowl looked like an "
           "ashtray.", "Everyone's first bowl does. Give it a few weeks.", "hobby", ["hobby"])],
        [Q("Which instruments are easiest to pick up as an adult?",
           "Ukulele, keyboard and hand drums have gentle starts.")],
    ],
    # session 5: partner (pronoun), marathon, running club
    [
        [X("{partner} and I have been together three years this spring, can you believe it.",
           "Three years! Any plans to celebrate?", "partner", ["partner"]),
         X("He's pulling all-nighters at the firm again, architects and deadlines, you know how "
           "it is. So maybe in May.", "May sounds like a good plan.", "partner_job",
           ["partner_job"])],
        [X("Ran my first half marathon {when}, and my legs are still jelly.",
           "Well done! How did it go?", "marathon", ["marathon"], when="yesterday")],
        [X("The running club meets on Wednesday evenings by the river, that's what got me "
           "through the training.", "A group makes such a difference.", "run1",
           ["running_club"])],
        [Q("How many days a week should I run when training for a half marathon?",
           "Three or four runs a week is plenty for most people.")],
    ],
    # session 6: friend's cat (a distractor), food, coffee, diet
    [
        [X("{friend} finally got the cat she's been talking about, a grey rescue called {cat}.",
           "Aw! Cats and rescues, a good combination.", "friend_cat", ["friend_cat"])],
        [X("If I could only eat one thing for the rest of my life it'd be {food}, no contest.",
           "Good choice. Hard to get tired of.", "food", ["food"])],
        [X("Grabbing my usual oat latte before class.", "Enjoy it!", "coffee", ["coffee"])],
        [X("Team dinner at a galbi place again. Being vegetarian, I had rice and a sad salad.",
           "That's rough. Maybe suggest the next place?", "diet1", ["diet"])],
        [Q("What's the best way to introduce a cat to a dog?",
           "Slowly: separate rooms first, swap scents, then short supervised meetings.")],
    ],
    # session 7: trip and language, phone
    [
        [X("Started {lang} lessons on Tuesday nights. We're going to {trip1} in October and I "
           "want to at least order food.", "That's a great reason to learn.", "lang",
           ["language", "trip"])],
        [X("Booked the flights {when}! Ten days.", "Exciting! Ten days is a good length.",
           "flights", ["flights"], when="today")],
        [X("My phone screen cracked again. This {phone1} has survived three drops, not four.",
           "Ouch. A case with raised edges might help.", "phone1", ["phone"])],
        [Q("How do you say 'Where do I live?' in {lang}?",
           "I can help with that. Want the polite or the casual form?")],
    ],
    # session 8: birthday and age, vet
    [
        [X("I'm turning {age} {when}, and {sister} insists on a party.",
           "Happy early birthday! A party sounds fun.", "birthday", ["birthday", "age"],
           when="this_weekday")],
        [X("{dog} had her vaccinations at the vet {when}. She sulked all evening.",
           "Poor thing. A treat usually fixes that.", "vet", ["vet"],
           when="day_before_yesterday")],
        [Q("What's a fun way to celebrate a birthday without a big party?",
           "A long dinner with a few friends, a day trip, or a class you've always wanted to try.")],
    ],
    # session 9: proposal, job offer
    [
        [X("Big news: {partner} proposed {when}! On a weekend trip to the beach, with the dog "
           "wearing a bow tie.",
           "Congratulations!! That's wonderful news.", "proposal", ["engaged"],
           when="last_weekday")],
        [X("Also, I've been offered a job as a curriculum designer at {company}, an ed-tech "
           "startup. It's in {city2}.", "What a week! Are you going to take it?", "offer",
           ["company"])],
        [Q("How do I know if a job offer is a good one?",
           "Compare the work itself, the people, the pay and what it does to your week.")],
    ],
    # session 10: notice
    [
        [X("Handed in my notice at {school} {when}. Six years, and I cried in the staff room.",
           "That's a big goodbye. Crying makes sense.", "notice", ["notice", "years_teaching"],
           when="today")],
        [Q("Is it normal to feel guilty about leaving a job?",
           "Very normal, especially in caring jobs. It fades.")],
    ],
    # session 11: the move, commute change
    [
        [X("Moving day was {when}. I can see the sea from the kitchen window of the new flat in "
           "{city2}!", "A sea view from the kitchen! How's it feeling?", "city2", ["city", "move"],
           when="last_weekday")],
        [X("Sold my bus pass. I'll cycle to the new office, it's only fifteen minutes along the "
           "coast.", "That sounds like a lovely commute.", "commute2", ["commute"], kind="change")],
        [Q("When is the best time of year to move house?",
           "Late spring or early autumn: mild weather and fewer people moving.")],
    ],
    # session 12: the new job, running club change
    [
        [X("First week as a curriculum designer done. I miss the kids, but not the marking.",
           "A big change. It's normal to miss them.", "job2", ["job"], kind="change")],
        [X("Switched running clubs too. The group here runs on Sunday mornings instead.",
           "Sunday mornings by the sea sounds nice.", "run2", ["running_club"], kind="change")],
    ],
    # session 13: phone change, nephew
    [
        [X("Dropped my phone off the pier (don't ask). Got a {phone2} now.",
           "Oh no! At least you got an upgrade.", "phone2", ["phone"], kind="change")],
        [X("{sister}'s boy {nephew} lost his first tooth and sent me a video of the gap.",
           "That's adorable.", "nephew", ["nephew"])],
        [Q("What phone has the best camera right now?",
           "It changes every year; reviews with sample photos are the best guide.")],
    ],
    # session 14: diet change, partner's instrument
    [
        [X("I've started eating fish again, the doctor wants more protein in me, so pescatarian "
           "now, I guess.", "Makes sense. Fish is easy to add.", "diet2", ["diet"],
           kind="change")],
        [X("{partner} has been practising {guitar} for the wedding and it's... a process.",
           "Ha, he's got time to improve.", "partner_music", ["partner_music"])],
    ],
    # session 15: trip change, hometown and wedding place
    [
        [X("Change of plan: the {trip1} flights got cancelled, so we're going to {trip2} "
           "instead.", "What a shame, but {trip2} is a great consolation.", "trip2", ["trip"],
           kind="change")],
        [X("Back in {hometown} for the weekend. My parents still live in the house I grew up in.",
           "That must feel familiar and strange at once.", "hometown", ["hometown"])],
        [X("We've decided on the wedding: next spring, right here in my hometown.",
           "That's lovely, close to your family.", "wedding", ["wedding"])],
    ],
    # session 16-18: other people's news (distractors), small talk, a few more decoys
    [
        [X("{sister} and her husband might move to Seoul for his job. She'd hate the commute.",
           "A big decision. I hope it works out for them.", "sister_plans", ["sister_plans"])],
        [Q("Which language is easiest for Korean speakers to learn?",
           "Japanese is usually the easiest, thanks to the shared grammar.")],
        [Q("What's a good name for a cat?", "Mochi, Nabi, Kkami and Tiger are popular.")],
    ],
    [
        [X("{friend} signed up for a full marathon in the autumn. Show-off.",
           "Ha! Are you tempted to join her?", "friend_running", ["friend_running"])],
        [Q("Where do most people in Korea live, in cities or in the countryside?",
           "Over 80% live in cities, about half in the Seoul area.")],
        [Q("What do architects actually do all day?",
           "Design, drawings, meetings with clients and engineers, and a lot of revisions.")],
    ],
    [
        [X("My manager at {company} used to teach too, so she gets why I still miss the kids.",
           "That must make the change easier.", "manager", ["manager"])],
        [Q("How old do you have to be to run a marathon?", "Most races require 18 or over.")],
        [Q("When do people usually get their dog vaccinated?",
           "Puppies at 6-8 weeks, then boosters yearly or every three years.")],
    ],
]

# Every fact key a user turn carries (its "facts"), with the value first stated and the value it
# changed to (or None). {date:label} is the resolved date of a relative one.
FACTS = {
    "name": ("Mina", None),
    "job": ("{subject} teacher at {school} Middle School", "curriculum designer at {company}"),
    "subject": ("{subject}", None),
    "school": ("{school} Middle School", None),
    "years_teaching": ("six years", None),
    "city": ("{city1}", "{city2}"),
    "move": ("{date:city2}", None),
    "commute": ("the 102 bus", "cycling along the coast"),
    "sister": ("{sister}, her older sister", None),
    "sister_job": ("nurse on a children's ward", None),
    "sister_plans": ("{sister} and her husband might move to Seoul", None),
    "allergy": ("{allergen}", None),
    "dog": ("{dog}", None),
    "dog_adopted": ("{date:dog_adopt}", None),
    "dog_breed": ("jindo mix", None),
    "instrument": ("{instrument}, played in the orchestra at university", None),
    "hobby": ("pottery", None),
    "partner": ("{partner}", None),
    "partner_job": ("architect", None),
    "partner_music": ("{guitar}", None),
    "marathon": ("first half marathon on {date:marathon}", None),
    "running_club": ("Wednesday evenings", "Sunday mornings"),
    "friend_cat": ("{friend}'s cat {cat}", None),
    "friend_running": ("{friend} signed up for a full marathon", None),
    "food": ("{food}", None),
    "coffee": ("oat latte", None),
    "diet": ("vegetarian", "pescatarian"),
    "language": ("{lang}", None),
    "trip": ("{trip1} in October", "{trip2}"),
    "flights": ("{date:flights}", None),
    "phone": ("{phone1}", "{phone2}"),
    "birthday": ("{date:birthday}", None),
    "age": ("{age}", None),
    "vet": ("{date:vet}", None),
    "engaged": ("to {partner} on {date:proposal}", None),
    "company": ("{company}, in {city2}", None),
    "notice": ("{date:notice}", None),
    "manager": ("her manager at {company} used to teach", None),
    "nephew": ("{nephew}, {sister}'s son", None),
    "hometown": ("{hometown}", None),
    "wedding": ("next spring in {hometown}", None),
}

# Small talk and requests that state nothing about the user. Some refer to people and pets by
# pronoun only ("She stole a sock again"): references without facts.
FILLER = [
    ("Can you suggest a quick dinner I can make in 15 minutes?",
     "Egg fried rice: day-old rice, two eggs, spring onion, soy sauce."),
    ("Tell me a fun fact about octopuses.", "They have three hearts and blue blood."),
    ("Ugh, Mondays.", "Hang in there. Coffee helps."),
    ("Haha, fair.", "Glad that landed."),
    ("Why is the sky blue?", "Air scatters short blue wavelengths more than red ones."),
    ("Give me three ideas for a rainy afternoon.", "A film, a new recipe, a long phone call."),
    ("What's the difference between weather and climate?",
     "Weather is today; climate is the long-run average."),
    ("Thanks, that's helpful.", "You're welcome!"),
    ("Interesting, go on.", "There's a lot more to it, happy to dig in."),
    ("Can you write a haiku about spring rain?",
     "Soft rain on the roof / the street forgets its footsteps / plum blossoms let go"),
    ("What's the capital of Australia?", "Canberra."),
    ("How long should I boil an egg for a runny yolk?", "About six minutes from boiling."),
    ("Good stretches after a run?", "Calf, hamstring, quad and hip flexor stretches."),
    ("Explain recursion like I'm five.",
     "A function that solves a small piece and asks itself to do the rest."),
    ("Which houseplants survive neglect?", "Snake plants, ZZ plants and pothos."),
    ("How do I make cold brew?", "Coarse grounds, cold water, 12-18 hours, then strain."),
    ("Give me a tip for speaking in front of people.", "Slow down; pauses feel longer to you."),
    ("What causes jet lag?", "Your body clock out of step with local daylight."),
    ("Tell me a joke.", "Why did the scarecrow win an award? He was outstanding in his field."),
    ("Lol.", "😄"),
    ("How does compound interest work?", "You earn interest on the interest, so it snowballs."),
    ("Okay, makes sense.", "Great."),
    ("How do I get a coffee stain out of a white shirt?",
     "Cold water, a little dish soap, then wash as usual."),
    ("What's a good packing list for a weekend hike?",
     "Layers, rain jacket, water, snacks, first-aid kit, headlamp."),
    ("Best way to keep herbs fresh?", "Stems in water in the fridge, loosely covered."),
    ("So tired today.", "Early night, maybe?"),
    ("It's raining again here.", "Good day for staying in."),
    ("What's the tallest mountain in Africa?", "Kilimanjaro."),
    ("Recommend a board game for four players.", "Ticket to Ride is easy to learn and fun."),
    ("Summarise Hamlet in two sentences.",
     "A prince avenges his father's murder and hesitates. Almost everyone dies."),
    ("How do solar panels work?", "Light knocks electrons loose in silicon, making a current."),
    ("What's a good name for a sourdough starter?", "Bread Pitt is a classic."),
    ("How do vaccines work?", "They show your immune system a harmless preview of a germ."),
    ("Any tips for falling asleep faster?", "Same bedtime, cool room, no screens for an hour."),
    ("What should be in a basic first-aid kit?",
     "Plasters, gauze, tape, antiseptic, painkillers, tweezers."),
    ("Is it weird to eat cereal for dinner?", "Not at all. Add fruit and call it balanced."),
    ("How do I fix a squeaky door?", "A little oil or petroleum jelly on the hinge pins."),
    ("Explain what an API is.", "A menu of requests one program can make of another."),
    ("The weekend went by way too fast.", "They always do."),
    ("What's the difference between a latte and a flat white?",
     "A flat white is smaller, with less milk and a thinner foam."),
    ("How many cups of water should I drink a day?",
     "Around six to eight, more when it's hot or you exercise."),
    ("Help me write a polite reminder email.",
     "Hi, just a gentle reminder about ... Let me know if you need anything from me."),
    ("What's a quick stretch for a stiff neck?", "Slow ear-to-shoulder tilts, 20 seconds each."),
    ("Haha okay.", "🙂"),
    ("Why do cats knock things off tables?", "Curiosity, play, and wanting your attention."),
    ("Random question: why is the ocean salty?", "Rivers carry minerals from rocks into it."),
    ("How do I stop procrastinating?", "Start with a two-minute version of the task."),
    ("What's a good podcast about history?", "The Rest Is History is a popular one."),
    ("Just got back from the supermarket and forgot the eggs, the one thing I went for.",
     "The classic. Next time, write it on your hand."),
    ("How do I say no to extra work politely?",
     "Thank them, name what you're already doing, and offer a later date or a smaller part."),
    ("What's a good stretch of time for a nap?", "Twenty minutes, or a full 90-minute cycle."),
    ("Can you explain what inflation is in one line?",
     "Prices rising over time, so money buys a little less."),
    ("Is it normal that my laptop fan is so loud?",
     "Often it's dust or a busy background process; check the task manager."),
    ("Recommend a film for a lazy Sunday.", "Paddington 2. It fixes most moods."),
    ("What's the best way to learn vocabulary?", "Spaced repetition, a few minutes every day."),
    ("Why do onions make you cry?", "Cutting them releases a gas that irritates your eyes."),
    ("Give me a three-line poem about coffee.",
     "Dark cup, warm hands / the morning argues less / one more sip"),
    ("What's the difference between baking soda and baking powder?",
     "Powder has its own acid; soda needs one in the recipe."),
    ("Ha, that's so true.", "😄"),
    ("How do I clean a cast-iron pan?", "Hot water, a brush, dry it on the stove, a drop of oil."),
    ("Long week. Glad it's over.", "You made it. Time for nothing much."),
    ("What's the longest river in the world?", "The Nile, though the Amazon is a close rival."),
    ("How do I politely leave a group chat?", "A short goodbye message, then leave. No essay needed."),
    ("Suggest a simple exercise I can do at my desk.", "Seated leg raises, ten each side."),
    ("Why do we get hiccups?", "A twitch of the diaphragm; the 'hic' is your vocal cords closing."),
    ("Is it going to be hot this summer, do you think?",
     "I can't forecast, but recent summers have run hot."),
]
# Only after the dog, the partner, the sister have been introduced.
REFERENCES = [
    ("She stole a sock again. Only the left ones, always.", "A collector with standards.", "dog"),
    ("She's snoring on my feet right now.", "That sounds very cosy.", "dog"),
    ("Took her to the park and she refused to walk back.", "A classic dog protest.", "dog"),
    ("He made dinner tonight, a miracle.", "Enjoy it!", "partner"),
    ("He fell asleep on the sofa at 9 again.", "Long weeks will do that.", "partner"),
    ("She called me at 2am on her break, just to chat.", "Sweet, if a little late.", "sister"),
    ("We had a long walk by the water tonight.", "Sounds lovely.", "partner"),
]
INTRODUCED_IN = {"dog": 3, "partner": 5, "sister": 2}  # session number where each appears

EXCHANGES_PER_SESSION = 15

# --- the probes --------------------------------------------------------------------------------
# (category, question, evidence labels, expects, answer, extra)
#   expects: words that carry the answer; every one appears in the evidence turns' text
#   extra: {"date": label} for temporal ones (the resolved date of that label's {when}),
#          {"outdated": [...], "superseded": [labels]} for updated facts,
#          {"tempting": [...]} for unanswerable ones (words a wrong answer would borrow)
P = [
    # single-hop: one fact, stated once (possibly split over two adjacent user turns)
    ("single-hop", "What's my name?", ["name"], ["Mina"], "Mina", {}),
    ("single-hop", "Do you remember what I'm called?", ["name"], ["Mina"], "Mina", {}),
    ("single-hop", "What subject did I teach?", ["job1"], ["{subject}"], "{subject}", {}),
    ("single-hop", "What subject did Mina teach?", ["job1"], ["{subject}"], "{subject}", {}),
    ("single-hop", "Which school did I teach at?", ["job1"], ["{school}"],
     "{school} Middle School", {}),
    ("single-hop", "How long had Mina been teaching?", ["job1"], ["six years"], "six years", {}),
    ("single-hop", "What's my sister's name?", ["sister"], ["{sister}"], "{sister}", {}),
    ("single-hop", "What is Mina's older sister called?", ["sister"], ["{sister}"], "{sister}",
     {}),
    ("single-hop", "What does {sister} do for work?", ["sister", "sister_job"], ["nurse"],
     "a nurse on a children's ward", {}),
    ("single-hop", "What am I allergic to?", ["allergy"], ["{allergen}"], "{allergen}", {}),
    ("single-hop", "Is there any food Mina can't eat?", ["allergy"], ["{allergen}"],
     "{allergen} (allergy)", {}),
    ("single-hop", "What's my dog called?", ["dog_adopt", "dog_name"], ["{dog}"], "{dog}", {}),
    ("single-hop", "What is the name of Mina's dog?", ["dog_adopt", "dog_name"], ["{dog}"],
     "{dog}", {}),
    ("single-hop", "What did I name the dog I adopted?", ["dog_adopt", "dog_name"], ["{dog}"],
     "{dog}", {}),
    ("single-hop", "What breed is Mina's dog?", ["dog_adopt", "dog_name"], ["jindo"],
     "a jindo mix", {}),
    ("single-hop", "What instrument do I play?", ["instrument"], ["{instrument}"],
     "{instrument}", {}),
    ("single-hop", "Which instrument does Mina play?", ["instrument"], ["{instrument}"],
     "{instrument}", {}),
    ("single-hop", "What class did I sign up for on Saturday mornings?", ["hobby"], ["pottery"],
     "pottery", {}),
    ("single-hop", "What's Mina's hobby?", ["hobby"], ["pottery"], "pottery", {}),
    ("single-hop", "What's my partner's name?", ["partner"], ["{partner}"], "{partner}", {}),
    ("single-hop", "Who is Mina with?", ["partner"], ["{partner}"], "{partner}", {}),
    ("single-hop", "What does {partner} do for a living?", ["partner", "partner_job"],
     ["architect"], "he's an architect", {}),
    ("single-hop", "What is {friend}'s cat called?", ["friend_cat"], ["{cat}"], "{cat}", {}),
    ("single-hop", "What's my favourite food?", ["food"], ["{food}"], "{food}", {}),
    ("single-hop", "What would Mina eat for the rest of her life?", ["food"], ["{food}"],
     "{food}", {}),
    ("single-hop", "How do I take my coffee?", ["coffee"], ["oat latte"], "an oat latte", {}),
    ("single-hop", "What's Mina's usual coffee order?", ["coffee"], ["oat latte"],
     "an oat latte", {}),
    ("single-hop", "Which language am I learning?", ["lang"], ["{lang}"], "{lang}", {}),
    ("single-hop", "What language is Mina studying?", ["lang"], ["{lang}"], "{lang}", {}),
    ("single-hop", "Where did I grow up?", ["hometown"], ["{hometown}"], "{hometown}", {}),
    ("single-hop", "Where do Mina's parents live?", ["hometown"], ["{hometown}"], "{hometown}",
     {}),
    ("single-hop", "What's my nephew's name?", ["nephew"], ["{nephew}"], "{nephew}", {}),
    ("single-hop", "How old is Mina?", ["birthday"], ["{age}"], "{age}", {}),
    ("single-hop", "How old am I now?", ["birthday"], ["{age}"], "{age}", {}),
    ("single-hop", "Which company do I work for?", ["offer"], ["{company}"], "{company}", {}),
    ("single-hop", "What's the name of Mina's employer?", ["offer"], ["{company}"], "{company}",
     {}),
    ("single-hop", "What race did I run?", ["marathon"], ["half marathon"],
     "a half marathon (her first)", {}),
    ("single-hop", "Where did I use to play in an orchestra?", ["instrument", "orchestra"],
     ["uni"], "at university", {}),
    ("single-hop", "What is the name of my dog?", ["dog_adopt", "dog_name"], ["{dog}"], "{dog}",
     {}),
    ("single-hop", "Where did Mina grow up?", ["hometown"], ["{hometown}"], "{hometown}", {}),
    ("single-hop", "What is my sister's job?", ["sister", "sister_job"], ["nurse"], "a nurse",
     {}),
    ("single-hop", "Where is the wedding going to be?", ["hometown", "wedding"],
     ["{hometown}", "wedding"], "in {hometown}, her hometown, next spring", {}),
    # multi-hop: two or more facts stated in different places
    ("multi-hop", "What does my fiancé do for a living?", ["partner", "partner_job", "proposal"],
     ["architect"], "he's an architect", {}),
    ("multi-hop", "What is Mina's fiancé's job?", ["partner", "partner_job", "proposal"],
     ["architect"], "architect", {}),
    ("multi-hop", "Which city was I living in when I adopted my dog?",
     ["city1", "dog_adopt", "city2"], ["{city1}"], "{city1} (the move to {city2} came later)", {}),
    ("multi-hop", "Where did Mina live when she got {dog}?",
     ["city1", "dog_adopt", "dog_name", "city2"], ["{city1}"],
     "{city1} (the move to {city2} came later)", {}),
    ("multi-hop", "Which city did I live in while I was still teaching?",
     ["job1", "city1", "city2"], ["{city1}"], "{city1} (the move to {city2} came later)", {}),
    ("multi-hop", "Which city was Mina in when {partner} proposed?",
     ["city1", "proposal", "city2"], ["{city1}"], "{city1} (the move to {city2} came later)", {}),
    ("multi-hop", "What instrument is my fiancé learning?", ["partner", "proposal",
                                                            "partner_music"],
     ["{guitar}"], "{guitar}", {}),
    ("multi-hop", "What is Mina's future husband practising for the wedding?",
     ["proposal", "partner_music"], ["{guitar}"], "{guitar}", {}),
    ("multi-hop", "What's the name of my sister's son?", ["sister", "nephew"], ["{nephew}"],
     "{nephew}", {}),
    ("multi-hop", "Who is {sister}'s son, and whose sister is she?", ["sister", "nephew"],
     ["{nephew}", "{sister}"], "{nephew}; {sister} is Mina's older sister", {}),
    ("multi-hop", "How many years did I teach before I became a curriculum designer?",
     ["job1", "notice", "job2"], ["six years"], "six years", {}),
    ("multi-hop", "What did Mina do before her current job?", ["job1", "job2"],
     ["teaching", "{subject}"],
     "she taught {subject} at a middle school, before she became a curriculum designer", {}),
    ("multi-hop", "Which two cities have I lived in?", ["city1", "city2"],
     ["{city1}", "{city2}"], "{city1}, then {city2}", {}),
    ("multi-hop", "Where has Mina lived, in order?", ["city1", "city2"], ["{city1}", "{city2}"],
     "{city1}, then {city2}", {}),
    ("multi-hop", "What are the names of my dog and my friend's cat?",
     ["dog_adopt", "dog_name", "friend_cat"], ["{dog}", "{cat}"], "{dog} and {cat}", {}),
    ("multi-hop", "What do my sister and my fiancé do for work?",
     ["sister", "sister_job", "partner", "partner_job", "proposal"], ["nurse", "architect"],
     "a nurse and an architect", {}),
    ("multi-hop", "What were my commutes before and after the move?",
     ["commute1", "commute2", "city2"], ["bus", "cycle"],
     "the bus in {city1}, then cycling in {city2}", {}),
    ("multi-hop", "Why did Mina start learning {lang}, and is that trip still on?",
     ["lang", "trip2"], ["{trip1}", "{trip2}"],
     "for {trip1}; cancelled, she goes to {trip2} instead", {}),
    ("multi-hop", "Which dog wore a bow tie when I got engaged?",
     ["proposal", "dog_adopt", "dog_name"], ["bow tie", "{dog}"], "{dog}", {}),
    ("multi-hop", "Who proposed to Mina, and where?", ["partner", "proposal"],
     ["{partner}", "beach"], "{partner}, on the beach", {}),
    ("multi-hop", "Why did I move to {city2}?", ["offer", "city2"], ["{company}", "{city2}"],
     "for the job at {company}", {}),
    ("multi-hop", "Which city is Mina's new job in, and does she live there now?",
     ["offer", "city2"], ["{city2}"], "{city2}; yes, she moved there", {}),
    ("multi-hop", "What's the name of the dog that wore a bow tie at the proposal?",
     ["proposal", "dog_name"], ["{dog}"], "{dog}", {}),
    ("multi-hop", "Who insisted on throwing my birthday party, and what does she do?",
     ["sister", "sister_job", "birthday"], ["{sister}", "nurse"], "{sister}, a nurse", {}),
    # temporal: needs the session's date to turn a relative date into an absolute one
    ("temporal", "When did I adopt my dog?", ["dog_adopt"], ["adopted", "{when:dog_adopt}"],
     "{date:dog_adopt}", {"date": "dog_adopt"}),
    ("temporal", "On what date did Mina get {dog}?", ["dog_adopt", "dog_name"],
     ["adopted", "{when:dog_adopt}"], "{date:dog_adopt}", {"date": "dog_adopt"}),
    ("temporal", "When did I run my first half marathon?", ["marathon"],
     ["half marathon", "{when:marathon}"], "{date:marathon}", {"date": "marathon"}),
    ("temporal", "What date was Mina's half marathon?", ["marathon"],
     ["half marathon", "{when:marathon}"], "{date:marathon}", {"date": "marathon"}),
    ("temporal", "When is my birthday?", ["birthday"], ["turning", "{when:birthday}"],
     "{date:birthday}", {"date": "birthday"}),
    ("temporal", "What date is Mina's birthday?", ["birthday"], ["turning", "{when:birthday}"],
     "{date:birthday}", {"date": "birthday"}),
    ("temporal", "When did {partner} propose?", ["proposal"], ["proposed", "{when:proposal}"],
     "{date:proposal}", {"date": "proposal"}),
    ("temporal", "What day did Mina get engaged?", ["proposal"], ["proposed", "{when:proposal}"],
     "{date:proposal}", {"date": "proposal"}),
    ("temporal", "When did I hand in my notice?", ["notice"], ["notice", "{when:notice}"],
     "{date:notice}", {"date": "notice"}),
    ("temporal", "When did Mina quit teaching?", ["notice"], ["notice", "{when:notice}"],
     "{date:notice}", {"date": "notice"}),
    ("temporal", "When did I move to {city2}?", ["city2"], ["Moving day", "{when:city2}"],
     "{date:city2}", {"date": "city2"}),
    ("temporal", "What was Mina's moving day?", ["city2"], ["Moving day", "{when:city2}"],
     "{date:city2}", {"date": "city2"}),
    ("temporal", "When did I book the flights for the trip?", ["flights"],
     ["flights", "{when:flights}"], "{date:flights}", {"date": "flights"}),
    ("temporal", "When did {dog} get her vaccinations?", ["vet"],
     ["vaccinations", "{when:vet}"], "{date:vet}", {"date": "vet"}),
    ("temporal", "When was my dog last at the vet?", ["vet"],
     ["vaccinations", "{when:vet}"], "{date:vet}", {"date": "vet"}),
    ("temporal", "On which day of the week was Mina's half marathon?", ["marathon"],
     ["half marathon", "{when:marathon}"], "{weekday:marathon}", {"date": "marathon"}),
    ("temporal", "In which month did I adopt my dog?", ["dog_adopt"],
     ["adopted", "{when:dog_adopt}"], "{month:dog_adopt}", {"date": "dog_adopt"}),
    ("temporal", "In which month did Mina move?", ["city2"], ["Moving day", "{when:city2}"],
     "{month:city2}", {"date": "city2"}),
    # updated fact: the fact changed; the answer is the newest value
    ("updated-fact", "Where do I live?", ["city2"], ["{city2}"], "{city2}",
     {"outdated": ["{city1}"], "superseded": ["city1"]}),
    ("updated-fact", "Which city does Mina live in now?", ["city2"], ["{city2}"], "{city2}",
     {"outdated": ["{city1}"], "superseded": ["city1"]}),
    ("updated-fact", "Where do I live these days?", ["city2"], ["{city2}"], "{city2}",
     {"outdated": ["{city1}"], "superseded": ["city1"]}),
    ("updated-fact", "What's my job?", ["job2"], ["curriculum designer"],
     "curriculum designer", {"outdated": ["teaching"], "superseded": ["job1"]}),
    ("updated-fact", "What does Mina do for work?", ["job2"], ["curriculum designer"],
     "curriculum designer", {"outdated": ["teaching"], "superseded": ["job1"]}),
    ("updated-fact", "Is Mina still a teacher?", ["notice", "job2"], ["curriculum designer"],
     "no: she handed in her notice; curriculum designer now", {"outdated": ["teaching"],
                                             "superseded": ["job1"]}),
    ("updated-fact", "How do I get to work?", ["commute2"], ["cycle"], "she cycles",
     {"outdated": ["bus"], "superseded": ["commute1"]}),
    ("updated-fact", "How does Mina commute these days?", ["commute2"], ["cycle"],
     "by bike, along the coast", {"outdated": ["bus"], "superseded": ["commute1"]}),
    ("updated-fact", "When does my running club meet?", ["run2"], ["Sunday mornings"],
     "Sunday mornings", {"outdated": ["Wednesday"], "superseded": ["run1"]}),
    ("updated-fact", "On which day does Mina go running with her club?", ["run2"],
     ["Sunday mornings"], "Sunday mornings", {"outdated": ["Wednesday"],
                                              "superseded": ["run1"]}),
    ("updated-fact", "What phone do I have?", ["phone2"], ["{phone2}"], "{phone2}",
     {"outdated": ["{phone1}"], "superseded": ["phone1"]}),
    ("updated-fact", "Which phone does Mina use now?", ["phone2"], ["{phone2}"], "{phone2}",
     {"outdated": ["{phone1}"], "superseded": ["phone1"]}),
    ("updated-fact", "What diet do I follow?", ["diet2"], ["pescatarian"], "pescatarian",
     {"outdated": ["vegetarian"], "superseded": ["diet1"]}),
    ("updated-fact", "Is Mina vegetarian?", ["diet2"], ["pescatarian"],
     "not any more: pescatarian", {"outdated": ["vegetarian"], "superseded": ["diet1"]}),
    ("updated-fact", "Where am I going on holiday in October?", ["lang", "trip2"],
     ["{trip2}"], "{trip2}", {"outdated": ["{trip1}"], "superseded": ["lang"]}),
    ("updated-fact", "Where is Mina travelling this autumn?", ["lang", "trip2"], ["{trip2}"],
     "{trip2}", {"outdated": ["{trip1}"], "superseded": ["lang"]}),
    ("updated-fact", "What's my job now?", ["job2"], ["curriculum designer"],
     "curriculum designer", {"outdated": ["teaching"], "superseded": ["job1"]}),
    ("updated-fact", "Does Mina still take the bus to work?", ["commute2"], ["cycle"],
     "no, she cycles now", {"outdated": ["bus"], "superseded": ["commute1"]}),
    # unanswerable: never stated; the right outcome is "I don't know"
    ("unanswerable", "What's my cat's name?", [], [], None, {"tempting": ["{cat}"]}),
    ("unanswerable", "What is Mina's cat called?", [], [], None, {"tempting": ["{cat}"]}),
    ("unanswerable", "What's my brother's name?", [], [], None,
     {"tempting": ["{sister}", "{nephew}"]}),
    ("unanswerable", "Where did Mina go to university?", [], [], None, {"tempting": ["uni"]}),
    ("unanswerable", "What did I study at university?", [], [], None,
     {"tempting": ["{subject}"]}),
    ("unanswerable", "What car do I drive?", [], [], None, {"tempting": ["bus"]}),
    ("unanswerable", "What's Mina's blood type?", [], [], None, {"tempting": []}),
    ("unanswerable", "What's {partner}'s favourite food?", [], [], None,
     {"tempting": ["{food}"]}),
    ("unanswerable", "What was the name of my school's principal?", [], [], None,
     {"tempting": ["{school}"]}),
    ("unanswerable", "What's my favourite band?", [], [], None, {"tempting": []}),
    ("unanswerable", "When is my dog's birthday?", [], [], None,
     {"tempting": ["{when:dog_adopt}"]}),
    ("unanswerable", "Where did Mina and {partner} first meet?", [], [], None,
     {"tempting": ["beach"]}),
    ("unanswerable", "What does {friend} do for work?", [], [], None,
     {"tempting": ["nurse", "curriculum designer"]}),
    ("unanswerable", "What's Mina's middle name?", [], [], None, {"tempting": ["Mina"]}),
    ("unanswerable", "How much rent do I pay in {city2}?", [], [], None,
     {"tempting": ["{city2}"]}),
    ("unanswerable", "What's my sister's husband's name?", [], [], None,
     {"tempting": ["{partner}"]}),
    ("unanswerable", "Which floor is my flat on?", [], [], None, {"tempting": ["{city2}"]}),
    ("unanswerable", "What's Mina's shoe size?", [], [], None, {"tempting": []}),
]


def person(question: str) -> str:
    """How a probe refers to the user: "third" (by name, "Mina"), "first" ("I", "my", "me") or
    "none" (it asks about someone else by name: "What does Jiwoo do for work?")."""
    if "Mina" in question:
        return "third"
    if re.search(r"\b(?:I|I'm|my|me)\b", question):
        return "first"
    return "none"


# --- the generator -----------------------------------------------------------------------------


def generate(seed: int = 7) -> dict:
    """Build the conversation dict (format: data/evaluation/README.md)."""
    rng = random.Random(seed)
    values = pick_values(rng)

    # session dates: from a fixed start, 6-12 days apart; the probe session 10-20 days later
    start = dt.date(2025, 2, 1) + dt.timedelta(days=rng.randint(0, 6))
    dates = [start]
    for _ in range(len(STORY) - 1):
        dates.append(dates[-1] + dt.timedelta(days=rng.randint(6, 12)))
    dates.append(dates[-1] + dt.timedelta(days=rng.randint(10, 20)))

    turns: list[dict] = []
    labels: dict[str, str] = {}  # label -> turn id of the user's line
    events: dict[str, tuple[str, dt.date]] = {}
    filler_cycle = rng.sample(FILLER, len(FILLER))
    filler_at = 0

    def add(session: int, speaker: str, text: str, kind: str, facts=()) -> str:
        turn_id = f"t{len(turns) + 1:03d}"
        turns.append({"id": turn_id, "session_id": f"session-{session}",
                      "date": dates[session - 1].isoformat(), "speaker": speaker,
                      "text": text, "kind": kind, "facts": list(facts)})
        return turn_id

    for number, blocks in enumerate(STORY, start=1):
        day = dates[number - 1]
        story_exchanges = sum(len(b) for b in blocks)
        fillers: list[list[dict]] = []
        for _ in range(EXCHANGES_PER_SESSION - story_exchanges):
            refs = [r for r in REFERENCES if INTRODUCED_IN[r[2]] < number]
            if refs and rng.random() < 0.25:
                u, a, _ = rng.choice(refs)
            else:
                u, a = filler_cycle[filler_at % len(filler_cycle)]
                filler_at += 1
            fillers.append([{"u": u, "a": a, "label": None, "facts": [], "kind": "filler",
                             "when": None}])
        # story blocks keep their order; filler goes in between at random places
        order = [("story", b) for b in blocks] + [("filler", b) for b in fillers]
        positions = sorted(rng.sample(range(len(order)), len(blocks)))
        mixed: list[list[dict]] = [None] * len(order)  # type: ignore[list-item]
        for position, block in zip(positions, blocks, strict=True):
            mixed[position] = block
        rest = iter(fillers)
        mixed = [b if b is not None else next(rest) for b in mixed]
        for block in mixed:
            for ex in block:
                local = dict(events)
                if ex["when"]:
                    phrase, when = resolve_when(ex["when"], day, rng)
                    events[ex["label"]] = (phrase, when)
                    local[ex["label"]] = (phrase, when)
                    user_text = fill(ex["u"].replace("{when}", phrase), values)
                else:
                    user_text = fill(ex["u"], values)
                turn_id = add(number, "user", user_text, ex["kind"], ex["facts"])
                if ex["label"]:
                    labels[ex["label"]] = turn_id
                add(number, "assistant", fill(ex["a"], values), "reply")

    # the probe session: every probe once, in a seeded order; the model answers them
    probe_session = len(STORY) + 1
    probes = []
    for index, (category, question, evidence, expects, answer, extra) in enumerate(
            rng.sample(P, len(P)), start=1):
        q = fill(question, values, events)
        turn_id = add(probe_session, "user", q, "probe")
        probe = {
            "id": f"p{index:03d}",
            "turn_id": turn_id,
            "question": q,
            "category": category,
            "person": person(q),
            "evidence": [labels[label] for label in evidence],
            "expects": [fill(e, values, events) for e in expects],
            "answer": fill(answer, values, events) if answer else None,
            "changed": category == "updated-fact",
        }
        if "date" in extra:
            probe["date"] = events[extra["date"]][1].isoformat()
        if "outdated" in extra:
            probe["outdated"] = [fill(e, values, events) for e in extra["outdated"]]
            probe["superseded_evidence"] = [labels[label] for label in extra["superseded"]]
        if "tempting" in extra:
            probe["tempting"] = [fill(e, values, events) for e in extra["tempting"]]
        probes.append(probe)

    sessions = [{"id": f"session-{i}", "date": d.isoformat(), "weekday": WEEKDAYS[d.weekday()]}
                for i, d in enumerate(dates, start=1)]
    history = [t for t in turns if t["kind"] != "probe"]
    counts = {c: sum(p["category"] == c for p in probes)
              for c in ("single-hop", "multi-hop", "temporal", "updated-fact", "unanswerable")}
    return {
        "id": "hard_conversation",
        "seed": seed,
        "language": "en",
        "user_id": "mina",
        "description": (
            f"{len(history)} turns (user and assistant) over {len(STORY)} dated sessions, then "
            f"{len(probes)} probe questions in session {probe_session}: "
            + ", ".join(f"{n} {c}" for c, n in counts.items())
            + ". Facts stated in passing, split over turns, by pronoun and relative date, some "
            "changed later."),
        "system": "You are a friendly assistant. Answer briefly.",
        "speakers": {"user": "Mina", "assistant": "the assistant"},
        "sessions": sessions,
        "facts": {key: {"value": fill(value, values, events),
                        "changed_to": fill(changed, values, events) if changed else None}
                  for key, (value, changed) in FACTS.items()},
        "values": values,
        "turns": turns,
        "probes": probes,
    }


def main(argv: list[str] | None = None) -> int:
    return run_cli(argv, generate, DEFAULT_OUT, "make_hard_conversation.py", __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
