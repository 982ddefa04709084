"""The training corpus, generated from the project's own grammar and templates (fixed seed).

Set in the seeds' world: Chapter 10's cast (the, cat, sat, on ...), Ch. 30's travel
assistant with its 750-yuan limit, and cities such as Paris and Lyon. Each document gives
attention heads something to look back for: a traveller's name introduced early and
repeated later, a city named then restated, a price quoted then compared with the limit.

Each turn is drawn from several phrasings (and the reply's parts from several choices: an
opening, how the comparison is worded, a closing, whether the dialogue goes on), so a model
trained on it has real alternatives to weigh at many steps, not one certain continuation;
the facts (which name, which city, whether the price is within the limit) stay determined.
"""

from __future__ import annotations

import random

END = "<|endoftext|>"

NAMES = [
    "Mira", "Tom", "Ana", "Leo", "Sara", "Ravi", "Yuki", "Omar", "Lena", "Chen", "Ines", "Paul",
    "Nora", "Kofi", "Hana", "Ivan", "Lucia", "Amir", "Eva", "Jonas", "Priya", "Marco", "Aiko", "Sofia",
    "Diego", "Fatima", "Lars", "Mei", "Tariq", "Zoe", "Hugo", "Nadia",
]  # fmt: skip
COUNTRY = {
    "Paris": "France", "Lyon": "France", "Nice": "France", "Marseille": "France",
    "Rome": "Italy", "Milan": "Italy", "Venice": "Italy", "Berlin": "Germany", "Munich": "Germany",
    "Hamburg": "Germany", "Madrid": "Spain", "Seville": "Spain", "Barcelona": "Spain",
    "Vienna": "Austria", "Lisbon": "Portugal", "Porto": "Portugal", "Prague": "Czechia",
    "Oslo": "Norway", "Bergen": "Norway", "Dublin": "Ireland", "Athens": "Greece", "Warsaw": "Poland",
    "Krakow": "Poland", "Zurich": "Switzerland", "Geneva": "Switzerland", "Amsterdam": "the Netherlands",
}  # fmt: skip
CITIES = list(COUNTRY)
ANIMALS = ["cat", "dog", "bird", "fox", "mouse", "owl", "hen", "goat"]
PLACES = ["mat", "rug", "chair", "bed", "wall", "box", "sofa", "step", "roof", "bench"]
VERBS = ["sat", "slept", "stood", "lay", "waited"]
THINGS = [
    "hotel", "train ticket", "dinner", "museum pass", "taxi", "room", "bike", "boat tour",
    "concert ticket", "lunch", "guide", "tour",
]  # fmt: skip
LIMIT = 750
UNDER = ["within", "under", "below"]  # ways to say price <= LIMIT
OVER = ["over", "above", "more than"]  # ways to say price > LIMIT


def _cast_story(r: random.Random) -> str:
    a, b = r.sample(ANIMALS, 2)
    p, q = r.sample(PLACES, 2)
    v = r.choice(VERBS)
    lines = [
        f"The {a} {v} on the {p}.",
        f"The {b} {r.choice(VERBS)} on the {q}.",
        r.choice([f"Then the {b} saw the {a} on the {p}.", f"The {a} saw the {b}."]),
        r.choice([f"The {a} stayed on the {p}.", f"The {a} left the {p} and sat on the {q}."]),
    ]
    return " ".join(lines[: r.randint(2, 4)])


def _price(r: random.Random) -> int:
    """Round prices (multiples of 50) and any price from 100 to 990 yuan, equally often."""
    return r.choice([r.randint(1, 19) * 50, r.randint(100, 990)])


def _price_reply(r: random.Random, name: str, city: str, thing: str, price: int) -> str:
    """The assistant's answer: an optional opening, the comparison with the limit (always with
    both numbers), the name exactly once, and an optional closing. Only the facts are fixed."""
    ok = price <= LIMIT
    cmp = "within" if price == LIMIT else r.choice(UNDER if ok else OVER)  # 750 is not "under" 750
    limit = r.choice(
        [
            f"the {LIMIT}-yuan limit",
            f"the daily limit of {LIMIT} yuan",
            f"the limit of {LIMIT} yuan per day",
            f"your {LIMIT}-yuan limit",
        ]
    )
    core = r.choice(
        [
            f"{price} yuan is {cmp} {limit}",
            f"The {thing} costs {price} yuan, which is {cmp} {limit}",
            f"At {price} yuan, the {thing} is {cmp} {limit}",
        ]
    )
    short, warm = ("Yes", "Good news") if ok else ("No", "Sorry")
    # The name is written once: in the opening, or else after the comparison.
    opening, named = r.choices(
        [
            (f"{short}, {name}. ", True),
            (f"{short}, {name}! ", True),
            (f"{short}. ", False),
            (f"{warm}, {name}. ", True),
            ("", False),
        ],
        weights=[2, 1, 2, 1, 4],
    )[0]
    text = opening + core + ("." if named else f", {name}.")
    if ok:
        closings = [
            f"Enjoy {r.choice(['your', 'the'])} {thing} in {city}.",
            f"Have a good time in {city}.",
            "You can book it.",
            "",
        ]
    else:
        closings = [f"Please choose a cheaper {thing} in {city}.", f"Maybe look for a cheaper {thing}.", ""]
    closing = r.choice(closings)
    return "Assistant: " + text + (" " + closing if closing else "")


def _travel_dialogue(r: random.Random) -> str:
    name, city, thing = r.choice(NAMES), r.choice(CITIES), r.choice(THINGS)
    hello = r.choice(
        [
            f"User: Hello, my name is {name}. I am planning a trip to {city}.",
            f"User: Hi, I am {name} and I am going to {city}.",
            f"User: I am planning a trip to {city}. My name is {name}.",
            f"User: Hello! {name} here. Next week I travel to {city}.",
        ]
    )
    greet = r.choice(
        [
            f"Assistant: Hello {name}. The travel limit is {LIMIT} yuan per day.",
            f"Assistant: Hi {name}! Your limit is {LIMIT} yuan per day.",
            f"Assistant: Welcome, {name}. You can spend up to {LIMIT} yuan per day in {city}.",
        ]
    )
    turns = [hello, greet]
    if r.random() < 0.25:  # a distractor number: the old limit
        turns.append(
            r.choice(["User: The old limit was 600 yuan. Is it still 600 yuan?", "User: Is the limit 600 yuan?"])
        )
        turns.append(f"Assistant: No, {name}. The limit was updated from 600 yuan to {LIMIT} yuan.")
    for i in range(r.choices([1, 2, 3], weights=[5, 3, 1])[0]):
        price = _price(r)
        thing = thing if i == 0 else r.choice(THINGS)
        ask = r.choice(
            [
                f"User: The {thing} in {city} costs {price} yuan. Is that allowed?",
                f"User: Can I book a {thing} for {price} yuan?",
                f"User: I found a {thing} for {price} yuan. Is that OK?",
                f"User: How about a {thing} in {city} at {price} yuan?",
            ]
        )
        turns += [ask, _price_reply(r, name, city, thing, price)]
    if r.random() < 0.3:
        turns += [f"User: Thank you! {r.choice(['Bye.', 'That helps.'])}", f"Assistant: You are welcome, {name}."]
    return "\n".join(turns)


def _city_quiz(r: random.Random) -> str:
    city, name = r.choice(CITIES), r.choice(NAMES)
    ask = r.choice([f"{name} asked: Which country is {city} in?", f"{name} asked: Where is {city}?"])
    answer = r.choice([f"{city} is in {COUNTRY[city]}, {name}.", f"It is in {COUNTRY[city]}, {name}."])
    return f"{ask}\nAssistant: {answer}"


def generate_corpus(n_documents: int, seed: int = 0) -> list[str]:
    """``n_documents`` short documents, deterministic for a given ``seed``."""
    r = random.Random(seed)
    makers = [_cast_story, _travel_dialogue, _travel_dialogue, _city_quiz]
    return [r.choice(makers)(r) for _ in range(n_documents)]
