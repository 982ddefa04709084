"""The training corpus, generated from the project's own grammar and templates (fixed seed).

Set in the seeds' world: Chapter 10's cast (the, cat, sat, on ...), Ch. 30's travel
assistant with its 750-yuan limit, and cities such as Paris and Lyon. Each document gives
attention heads something to look back for: a traveller's name introduced early and
repeated later, a city named then restated, a price quoted then compared with the limit.
"""

from __future__ import annotations

import random

END = "<|endoftext|>"

NAMES = ["Mira", "Tom", "Ana", "Leo", "Sara", "Ravi", "Yuki", "Omar", "Lena", "Chen", "Ines", "Paul"]
CITIES = ["Paris", "Lyon", "Rome", "Berlin", "Madrid", "Vienna", "Lisbon", "Prague", "Oslo", "Nice"]
ANIMALS = ["cat", "dog", "bird", "fox", "mouse", "owl"]
PLACES = ["mat", "rug", "chair", "bed", "wall", "box", "sofa", "step"]
VERBS = ["sat", "slept", "stood", "lay", "waited"]
THINGS = ["hotel", "train ticket", "dinner", "museum pass", "taxi", "room"]
LIMIT = 750


def _cast_story(r: random.Random) -> str:
    a, b = r.sample(ANIMALS, 2)
    p, q = r.sample(PLACES, 2)
    v = r.choice(VERBS)
    lines = [
        f"The {a} {v} on the {p}.",
        f"The {b} {r.choice(VERBS)} on the {q}.",
        f"Then the {b} saw the {a} on the {p}.",
        r.choice([f"The {a} stayed on the {p}.", f"The {a} left the {p} and sat on the {q}."]),
    ]
    return " ".join(lines[: r.randint(2, 4)])


def _price_reply(name: str, city: str, thing: str, price: int) -> str:
    if price <= LIMIT:
        return f"Assistant: {price} yuan is within the {LIMIT}-yuan limit, {name}. Enjoy your {thing} in {city}."
    return f"Assistant: {price} yuan is over the {LIMIT}-yuan limit, {name}. Please choose a cheaper {thing} in {city}."


def _travel_dialogue(r: random.Random) -> str:
    name, city, thing = r.choice(NAMES), r.choice(CITIES), r.choice(THINGS)
    price = r.choice([r.randint(1, 15) * 50, r.randint(100, 990)])
    turns = [
        f"User: Hello, my name is {name}. I am planning a trip to {city}.",
        f"Assistant: Hello {name}. The travel limit is {LIMIT} yuan per day.",
        f"User: The {thing} in {city} costs {price} yuan. Is that allowed?",
        _price_reply(name, city, thing, price),
    ]
    if r.random() < 0.3:
        turns.insert(1, "User: The old limit was 600 yuan. Is it still 600 yuan?")
        turns.insert(2, f"Assistant: No, {name}. The limit was updated from 600 yuan to {LIMIT} yuan.")
    return "\n".join(turns)


def _city_quiz(r: random.Random) -> str:
    facts = {
        "Paris": "France",
        "Lyon": "France",
        "Nice": "France",
        "Rome": "Italy",
        "Berlin": "Germany",
        "Madrid": "Spain",
        "Vienna": "Austria",
        "Lisbon": "Portugal",
        "Prague": "Czechia",
        "Oslo": "Norway",
    }
    city = r.choice(list(facts))
    name = r.choice(NAMES)
    return f"{name} asked: Which country is {city} in?\nAssistant: {city} is in {facts[city]}, {name}."


def generate_corpus(n_documents: int, seed: int = 0) -> list[str]:
    """``n_documents`` short documents, deterministic for a given ``seed``."""
    r = random.Random(seed)
    makers = [_cast_story, _travel_dialogue, _travel_dialogue, _city_quiz]
    return [r.choice(makers)(r) for _ in range(n_documents)]
