"""Generate the long evaluation conversation (lesson 08) from a seed.

    python scripts/make_long_conversation.py                 # writes data/evaluation/long_conversation.json
    python scripts/make_long_conversation.py --seed 11 --turns 400 --out /tmp/other.json

The conversation: one user over several sessions. The user states facts about themselves (each
fact once, spread over the first sessions), changes some of them later (a move, a new job, ...),
chats about other things in between (filler turns that state no fact), and asks probe questions
whose answers are in earlier turns. Each probe lists the ids of its evidence turns and the words
that must reach the model for it to be answerable. The format is documented in data/README.md.
Same seed, same file.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

# key: (statement, question, values, change statement or None)
FACTS = {
    "name": ("My name is {v}.", "What is my name?",
             ["Jordan", "Priya", "Mateo", "Lena", "Tomasz", "Aiko", "Noor", "Elias"], None),
    "job": ("I work as a {v}.", "What do I do for work?",
            ["nurse", "civil engineer", "baker", "librarian", "pilot", "pharmacist"],
            "I changed jobs: I now work as a {v}."),
    "city": ("I live in {v}.", "Where do I live?",
             ["Lisbon", "Oslo", "Toronto", "Kyoto", "Dublin", "Santiago", "Tallinn"],
             "Big change: I just moved to {v}."),
    "dog": ("I have a dog named {v}.", "What is my dog's name?",
            ["Biscuit", "Pepper", "Mango", "Rolo", "Juniper"], None),
    "sister": ("My sister is called {v}.", "What is my sister's name?",
               ["Clara", "Ingrid", "Yara", "Sofia", "Mei"], None),
    "food": ("My favourite food is {v}.", "What is my favourite food?",
             ["ramen", "paella", "dumplings", "lasagne", "falafel", "pho"],
             "These days my favourite food is {v}."),
    "allergy": ("I'm allergic to {v}.", "What am I allergic to?",
                ["peanuts", "shellfish", "penicillin", "pollen", "cats"], None),
    "colour": ("My favourite colour is {v}.", "What is my favourite colour?",
               ["teal", "mustard yellow", "burgundy", "forest green", "lilac"], None),
    "car": ("I drive a {v}.", "What car do I drive?",
            ["Fiat Panda", "Volvo estate", "Toyota Yaris", "Skoda Octavia", "Renault Zoe"],
            "I sold my old car and now drive a {v}."),
    "hometown": ("I grew up in {v}.", "Where did I grow up?",
                 ["Porto", "Bergen", "Cork", "Gdansk", "Valparaiso", "Nara"], None),
    "birthday": ("My birthday is in {v}.", "When is my birthday?",
                 ["March", "July", "October", "December", "February"], None),
    "language": ("I'm learning {v} in the evenings.", "Which language am I learning?",
                 ["Korean", "Portuguese", "Finnish", "Arabic", "Japanese"], None),
    "instrument": ("I play the {v}.", "Which instrument do I play?",
                   ["cello", "trumpet", "ukulele", "piano", "drums"], None),
    "sport": ("On weekends I play {v}.", "Which sport do I play?",
              ["volleyball", "badminton", "rugby", "table tennis", "padel"], None),
    "book": ("My favourite book is {v}.", "What is my favourite book?",
             ["Dune", "Middlemarch", "The Hobbit", "Beloved", "Solaris"], None),
    "partner": ("My partner's name is {v}.", "What is my partner's name?",
                ["Samir", "Hannah", "Diego", "Freya", "Kenji"], None),
    "coffee": ("I take my coffee {v}.", "How do I take my coffee?",
               ["black", "with oat milk", "with two sugars", "as a flat white"], None),
    "phone": ("My phone is a {v}.", "What phone do I have?",
              ["Pixel", "Fairphone", "iPhone", "Galaxy"], None),
    "band": ("My favourite band is {v}.", "What is my favourite band?",
             ["Radiohead", "ABBA", "Khruangbin", "Daft Punk", "Fleetwood Mac"], None),
    "trip": ("Next summer I'm travelling to {v}.", "Where am I travelling next summer?",
             ["Iceland", "Vietnam", "Morocco", "Peru", "New Zealand"],
             "Change of plan: next summer I'm travelling to {v} instead."),
    "gym": ("I go to the gym on {v}.", "Which day do I go to the gym?",
            ["Mondays", "Wednesdays", "Saturdays", "Thursdays"], None),
    "code": ("My favourite programming language is {v}.",
             "What is my favourite programming language?",
             ["Python", "Rust", "Haskell", "Go", "Kotlin"], None),
    "team": ("I support {v} in football.", "Which football team do I support?",
             ["Benfica", "Celtic", "Ajax", "Boca Juniors", "Napoli"], None),
    "diet": ("I follow a {v} diet.", "What diet do I follow?",
             ["vegetarian", "pescatarian", "vegan", "low-sodium"], None),
    "plant": ("I keep a {v} on my desk.", "What plant is on my desk?",
              ["cactus", "bonsai", "fern", "monstera"], None),
    "brother": ("My brother works as a {v}.", "What does my brother do?",
                ["firefighter", "dentist", "carpenter", "journalist"], None),
    "age": ("I am {v} years old.", "How old am I?", ["29", "34", "41", "52", "38"], None),
    "bike": ("I ride a {v} to the office.", "What bike do I ride?",
             ["folding Brompton", "red road bike", "cargo bike", "fixie"], None),
    "film": ("My favourite film is {v}.", "What is my favourite film?",
             ["Spirited Away", "Casablanca", "Amelie", "Parasite", "Arrival"], None),
    "mother": ("My mother lives in {v}.", "Where does my mother live?",
               ["Seville", "Aarhus", "Lyon", "Krakow", "Busan"], None),
    "hobby": ("My hobby is {v}.", "What is my hobby?",
              ["pottery", "birdwatching", "rock climbing", "knitting", "astronomy"], None),
    "floor": ("My flat is on the {v} floor.", "Which floor is my flat on?",
              ["third", "seventh", "second", "eleventh"], None),
    "shoe": ("My shoe size is {v}.", "What is my shoe size?", ["38", "42", "44", "40"], None),
    "podcast": ("My favourite podcast is {v}.", "What is my favourite podcast?",
                ["Radiolab", "99% Invisible", "Hardcore History", "Planet Money"], None),
}

# Turns that state no fact about the user: requests and chit-chat.
FILLER = [
    "Can you suggest a quick recipe for dinner tonight?",
    "Tell me a fun fact about octopuses.",
    "How do I center a div in CSS?",
    "What is a good way to learn touch typing?",
    "Explain the difference between weather and climate.",
    "Give me three ideas for a rainy afternoon.",
    "How long should pasta rest after cooking?",
    "What does a product manager usually do?",
    "Recommend a board game for four players.",
    "Why is the sky blue?",
    "Summarise the plot of Hamlet in two sentences.",
    "How do solar panels work?",
    "Thanks, that is helpful.",
    "Interesting, go on.",
    "Can you write a haiku about autumn?",
    "What is the capital of Australia?",
    "How many minutes should a soft-boiled egg cook?",
    "What are good stretches after running?",
    "Explain recursion with a simple example.",
    "Which houseplants need little light?",
    "How do I make cold brew coffee?",
    "What is the difference between a list and a tuple in Python?",
    "Give me a tip for public speaking.",
    "What causes jet lag?",
    "Tell me a joke about computers.",
    "How do vaccines train the immune system?",
    "What is a good name for a sourdough starter?",
    "Suggest a podcast episode about space.",
    "What should be in a basic first-aid kit?",
    "How does compound interest work?",
    "Okay, makes sense.",
    "What is the tallest mountain in Africa?",
    "How do I remove a coffee stain from a shirt?",
    "Can you explain what an API is?",
    "Give me a packing list for a weekend hike.",
    "What is the best way to store fresh herbs?",
]


def generate(seed: int = 7, turns: int = 300, sessions: int = 5) -> dict:
    """Build the conversation dict (see data/README.md for the format)."""
    rng = random.Random(seed)
    keys = list(FACTS)
    values = {k: rng.choice(FACTS[k][2]) for k in keys}
    changes = {k: rng.choice([v for v in FACTS[k][2] if v != values[k]])
               for k in keys if FACTS[k][3]}
    per_session = turns // sessions
    slots: list[dict | None] = [None] * turns

    # facts: the name first, the rest spread over the first 60% of the conversation
    fact_turns = sorted(rng.sample(range(1, int(turns * 0.6)), len(keys) - 1))
    order = ["name"] + rng.sample([k for k in keys if k != "name"], len(keys) - 1)
    for key, index in zip(order, [0, *fact_turns], strict=True):
        slots[index] = {"kind": "fact", "fact": key, "text": FACTS[key][0].format(v=values[key])}
    # changes: in the fourth fifth of the conversation
    free = [i for i in range(int(turns * 0.6), int(turns * 0.8)) if slots[i] is None]
    for key, index in zip(changes, sorted(rng.sample(free, len(changes))), strict=True):
        slots[index] = {"kind": "change", "fact": key,
                        "text": FACTS[key][3].format(v=changes[key])}
    # probes: every fact once in the last fifth (the changed ones ask for the new value), and a
    # few early probes soon after the fact was stated
    free = [i for i in range(int(turns * 0.8), turns) if slots[i] is None]
    for key, index in zip(rng.sample(keys, len(keys)), sorted(rng.sample(free, len(keys))),
                          strict=True):
        slots[index] = {"kind": "probe", "fact": key, "text": FACTS[key][1]}
    for key in rng.sample(keys, 6):
        stated = next(i for i, s in enumerate(slots) if s and s["fact"] == key)
        later = [i for i in range(stated + 5, int(turns * 0.6)) if slots[i] is None]
        if later:
            slots[rng.choice(later[:30])] = {"kind": "probe", "fact": key, "text": FACTS[key][1]}
    for i, slot in enumerate(slots):
        if slot is None:
            slots[i] = {"kind": "filler", "fact": None, "text": rng.choice(FILLER)}

    out_turns, probes, latest = [], [], {}
    for i, slot in enumerate(slots):
        turn_id = f"t{i + 1:03d}"
        session = f"session-{min(i // per_session, sessions - 1) + 1}"
        out_turns.append({"id": turn_id, "session_id": session, "text": slot["text"],
                          "kind": slot["kind"]})
        if slot["kind"] in ("fact", "change"):
            latest[slot["fact"]] = (turn_id, slot["kind"])
        elif slot["kind"] == "probe":
            evidence_id, how = latest[slot["fact"]]
            key = slot["fact"]
            expected = changes[key] if how == "change" else values[key]
            probes.append({"turn_id": turn_id, "question": slot["text"], "fact": key,
                           "evidence": [evidence_id], "expects": [expected],
                           "changed": how == "change"})
    return {
        "id": "long_conversation",
        "seed": seed,
        "language": "en",
        "user_id": "river",
        "description": (f"{turns} turns over {sessions} sessions: {len(keys)} facts the user "
                        f"states, {len(changes)} of them changed later, {len(probes)} probe "
                        "questions with the ids of their evidence turns."),
        "system": "You are a friendly assistant. Answer briefly.",
        "facts": {k: {"value": values[k], "changed_to": changes.get(k)} for k in keys},
        "turns": out_turns,
        "probes": probes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=5)
    default_out = Path(__file__).resolve().parent.parent / "data/evaluation/long_conversation.json"
    parser.add_argument("--out", type=Path, default=default_out)
    args = parser.parse_args()
    data = generate(args.seed, args.turns, args.sessions)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}: {data['description']}")


if __name__ == "__main__":
    main()
