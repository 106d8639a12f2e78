#!/usr/bin/env python3
"""Write the built-in tool-use check's items: crates/engine/src/check/items.jsonl.

`artifactflow-cli models check` (and the Models screen) asks a model these items and scores
its calls by rules (see crates/engine/src/check/score.rs). Every item is written here by us,
from a handful of realistic tools (notes, files, weather, calendar, web search, unit
conversion, email) and varied phrasing; nothing comes from another data set. The output is
deterministic: run it again and the file is the same; `--check` says whether the shipped
file is what this script writes.

Kinds (`kind`):
  one_call       one call with typed arguments (string, integer, number, boolean, enum, array)
  choose_tool    the right tool among several offered
  two_calls      two calls (in one answer or over two rounds)
  from_context   a value taken from earlier in the conversation
  no_tool        a question that needs no tool
  missing_value  a request missing a required value: the model should ask, not call

Argument rules (`expected.calls[].arguments.NAME`):
  {"exact": V}                     the same JSON value (an enum, a boolean, an integer)
  {"ci": "text"}                   the same text, ignoring case and surrounding space
  {"number": N, "tolerance": T}    a number within T of N
  {"contains": ["a", "b"]}         text holding each (ignoring case); an array with an element
                                   holding each
  {"any": true}                    present, any value

Usage: scripts/gen-tool-check.py [--check]   (--check: exit 1 when the file differs)
"""

import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "crates/engine/src/check/items.jsonl"


def tool(name, description, properties, required):
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        },
    }


S = lambda d: {"type": "string", "description": d}  # noqa: E731
I = lambda d: {"type": "integer", "description": d}  # noqa: E731
N = lambda d: {"type": "number", "description": d}  # noqa: E731
B = lambda d: {"type": "boolean", "description": d}  # noqa: E731
E = lambda d, vs: {"type": "string", "enum": vs, "description": d}  # noqa: E731
A = lambda d: {"type": "array", "items": {"type": "string"}, "description": d}  # noqa: E731

TOOLS = {
    "create_note": tool(
        "create_note",
        "Save a new note in the user's notes.",
        {
            "title": S("The note's title"),
            "body": S("The note's text"),
            "pinned": B("Keep the note at the top of the list"),
            "tags": A("Labels for the note"),
        },
        ["title", "body"],
    ),
    "search_notes": tool(
        "search_notes",
        "Search the user's notes by words.",
        {"query": S("Words to look for"), "limit": I("How many notes to return at most")},
        ["query"],
    ),
    "read_file": tool(
        "read_file",
        "Read a text file from the user's documents.",
        {"path": S("The file's path, relative to the documents folder")},
        ["path"],
    ),
    "write_file": tool(
        "write_file",
        "Write a text file in the user's documents.",
        {
            "path": S("The file's path, relative to the documents folder"),
            "content": S("The text to write"),
            "overwrite": B("Replace the file if it exists"),
        },
        ["path", "content"],
    ),
    "get_weather": tool(
        "get_weather",
        "The current weather in a city.",
        {
            "city": S("The city's name"),
            "units": E("Temperature units", ["celsius", "fahrenheit"]),
        },
        ["city"],
    ),
    "get_forecast": tool(
        "get_forecast",
        "The weather forecast for the next days in a city.",
        {"city": S("The city's name"), "days": I("How many days ahead (1 to 7)")},
        ["city", "days"],
    ),
    "create_event": tool(
        "create_event",
        "Add an event to the user's calendar.",
        {
            "title": S("What the event is"),
            "date": S("The day, as YYYY-MM-DD"),
            "time": S("The start time, as HH:MM (24-hour)"),
            "duration_minutes": I("How long it lasts, in minutes"),
            "attendees": A("Email addresses of the people invited"),
        },
        ["title", "date", "time"],
    ),
    "list_events": tool(
        "list_events",
        "The events in the user's calendar on one day.",
        {"date": S("The day, as YYYY-MM-DD")},
        ["date"],
    ),
    "web_search": tool(
        "web_search",
        "Search the web.",
        {"query": S("What to search for"), "max_results": I("How many results at most")},
        ["query"],
    ),
    "convert_units": tool(
        "convert_units",
        "Convert a quantity from one unit to another.",
        {
            "value": N("The quantity to convert"),
            "from_unit": S("The unit it is in, e.g. km, mi, kg, lb, c, f, l, gal"),
            "to_unit": S("The unit to convert to"),
        },
        ["value", "from_unit", "to_unit"],
    ),
    "send_email": tool(
        "send_email",
        "Send an email from the user's account.",
        {
            "to": S("The recipient's email address"),
            "subject": S("The subject line"),
            "body": S("The message"),
            "priority": E("How urgent it is", ["low", "normal", "high"]),
            "cc": A("Email addresses to copy"),
        },
        ["to", "subject", "body"],
    ),
}

ALL = list(TOOLS)


def exact(v):
    return {"exact": v}


def ci(v):
    return {"ci": v}


def num(v, tol=0.01):
    return {"number": v, "tolerance": tol}


def has(*words):
    return {"contains": list(words)}


ANY = {"any": True}


class Items:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.items = []
        self.counts = {}

    def tools_for(self, main, extra):
        """`main`'s tools plus `extra` others, in a shuffled but fixed order."""
        names = list(dict.fromkeys(main))
        others = [t for t in ALL if t not in names]
        names += self.rng.sample(others, extra)
        self.rng.shuffle(names)
        return [TOOLS[n] for n in names]

    def add(self, kind, messages, tools, calls):
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        else:
            roles = ["user", "assistant"]
            messages = [{"role": roles[i % 2], "content": m} for i, m in enumerate(messages)]
        self.items.append(
            {
                "id": f"{kind}-{self.counts[kind]:03d}",
                "kind": kind,
                "messages": messages,
                "tools": tools,
                "expected": {"calls": [{"name": n, "arguments": a} for n, a in calls]},
            }
        )


CITIES = ["Paris", "Lisbon", "Nairobi", "Osaka", "Toronto", "Melbourne", "Reykjavik", "Lima",
          "Warsaw", "Hanoi", "Cairo", "Denver", "Oslo", "Santiago", "Mumbai"]
PEOPLE = [("Ana", "ana@example.com"), ("Bo", "bo@example.org"), ("Chen", "chen@example.net"),
          ("Dara", "dara@example.com"), ("Emeka", "emeka@example.org"),
          ("Farah", "farah@example.com"), ("Gus", "gus@example.net"), ("Hana", "hana@example.com")]
NOTES = [("Groceries", "eggs, milk and bread", ["eggs", "milk"]),
         ("Packing list", "passport, charger, socks", ["passport", "charger"]),
         ("Book ideas", "a mystery set in a lighthouse", ["lighthouse"]),
         ("Gift ideas", "a scarf for mum and a puzzle for Leo", ["scarf", "puzzle"]),
         ("Garden", "plant tomatoes in May", ["tomatoes"]),
         ("Car", "change the oil at 60000 km", ["oil"]),
         ("Recipe", "pancakes: flour, eggs, milk, a pinch of salt", ["flour", "salt"]),
         ("Meeting notes", "budget approved, hire two engineers", ["budget", "engineers"]),
         ("Reading", "finish chapter 4 of Dune", ["chapter 4", "Dune"]),
         ("Wifi", "the guest network is called Harbor", ["Harbor"])]
FILES = ["reports/q3.txt", "todo.md", "notes/ideas.txt", "letters/landlord.txt", "plans/trip.md",
         "budget.csv", "drafts/speech.md", "recipes/soup.txt"]
SEARCHES = ["rust async tutorial", "best hiking trails near Denver", "how to repot an orchid",
            "python 3.13 release notes", "cheap flights to Lisbon", "symptoms of iron deficiency",
            "history of the printing press", "sourdough starter ratio"]
CONVERSIONS = [(5, "km", "mi"), (10, "kg", "lb"), (72, "f", "c"), (3.5, "l", "gal"),
               (100, "mi", "km"), (20, "c", "f"), (2.2, "lb", "kg"), (42.195, "km", "mi"),
               (1.5, "gal", "l"), (180, "lb", "kg")]
EVENTS = [("Dentist", "2025-03-14", "09:30", 45), ("Team standup", "2025-04-02", "10:00", 15),
          ("Piano lesson", "2025-05-20", "17:00", 60), ("Lunch with Ana", "2025-06-11", "12:30", 90),
          ("Flight to Oslo", "2025-07-01", "06:45", 180), ("Yoga", "2025-02-08", "08:00", 60),
          ("Budget review", "2025-09-23", "14:00", 120), ("Parent evening", "2025-10-07", "18:30", 30)]


def one_call(g):
    r = g.rng
    for title, body, words in NOTES:
        phrasing = r.choice([
            "Save a note titled \"{t}\": {b}.",
            "Please make a note called {t} that says {b}.",
            "Create a note, title {t}, with the text: {b}.",
        ])
        g.add("one_call", phrasing.format(t=title, b=body), g.tools_for(["create_note"], 1),
              [("create_note", {"title": ci(title), "body": has(*words)})])
    for title, body, words in NOTES[:4]:
        g.add("one_call", f"Pin a new note \"{title}\" at the top of my list: {body}.",
              g.tools_for(["create_note"], 0),
              [("create_note", {"title": ci(title), "body": has(*words), "pinned": exact(True)})])
    for (title, body, words), tags in zip(NOTES[4:8], [["home", "spring"], ["car"], ["food"], ["work"]]):
        tag_text = " and ".join(tags)
        g.add("one_call", f"Note down \"{title}\" ({body}) and tag it {tag_text}.",
              g.tools_for(["create_note"], 1),
              [("create_note", {"title": ci(title), "body": has(*words), "tags": has(*tags)})])
    for city in CITIES[:8]:
        units = r.choice(["celsius", "fahrenheit"])
        g.add("one_call", r.choice([
            f"What's the weather like in {city} right now? Give it in {units}.",
            f"Current weather for {city}, in {units} please.",
        ]), g.tools_for(["get_weather"], 1),
            [("get_weather", {"city": ci(city), "units": exact(units)})])
    for city, days in zip(CITIES[8:13], [3, 5, 7, 2, 4]):
        g.add("one_call", r.choice([
            f"Give me the {days}-day forecast for {city}.",
            f"What will the weather be in {city} over the next {days} days?",
        ]), g.tools_for(["get_forecast"], 1),
            [("get_forecast", {"city": ci(city), "days": exact(days)})])
    for value, src, dst in CONVERSIONS:
        g.add("one_call", r.choice([
            f"Convert {value} {src} to {dst}.",
            f"How much is {value} {src} in {dst}? Use the converter.",
        ]), g.tools_for(["convert_units"], 1),
            [("convert_units", {"value": num(value), "from_unit": ci(src), "to_unit": ci(dst)})])
    for path in FILES[:5]:
        g.add("one_call", r.choice([f"Open {path} and show me what's in it.",
                                    f"Read the file {path}."]),
              g.tools_for(["read_file"], 1), [("read_file", {"path": ci(path)})])
    for path, content, words in [("todo.md", "- call the bank\n- buy stamps", ["bank", "stamps"]),
                                 ("hello.txt", "Hello, world!", ["hello"]),
                                 ("plans/trip.md", "Day 1: Lisbon. Day 2: Sintra.", ["Sintra"])]:
        g.add("one_call", f"Write {path} with this content, replacing it if it exists:\n{content}",
              g.tools_for(["write_file"], 1),
              [("write_file", {"path": ci(path), "content": has(*words), "overwrite": exact(True)})])
    for q, n in zip(SEARCHES[:6], [3, 5, 10, 2, 8, 4]):
        g.add("one_call", f"Search the web for \"{q}\" and get me {n} results.",
              g.tools_for(["web_search"], 1),
              [("web_search", {"query": has(*q.split()[:2]), "max_results": exact(n)})])
    for (name, addr), (subject, body, words, priority) in zip(PEOPLE, [
        ("Lunch", "Are we still on for lunch on Friday?", ["lunch", "friday"], "normal"),
        ("Server down", "The build server is down, please restart it.", ["server"], "high"),
        ("Newsletter", "Here is the March newsletter draft.", ["newsletter"], "low"),
        ("Invoice 1042", "Invoice 1042 is attached and due next week.", ["1042"], "high"),
    ]):
        g.add("one_call",
              f"Email {addr} with the subject \"{subject}\" saying: {body} Mark it {priority} priority.",
              g.tools_for(["send_email"], 1),
              [("send_email", {"to": ci(addr), "subject": ci(subject), "body": has(*words),
                               "priority": exact(priority)})])
    for (title, date, time, minutes), people in zip(EVENTS[:4], [PEOPLE[:2], PEOPLE[2:3], PEOPLE[3:5], []]):
        who = "" if not people else " Invite " + " and ".join(a for _, a in people) + "."
        args = {"title": ci(title), "date": exact(date), "time": exact(time),
                "duration_minutes": exact(minutes)}
        if people:
            args["attendees"] = has(*[a for _, a in people])
        g.add("one_call", f"Put \"{title}\" in my calendar on {date} at {time} for {minutes} minutes.{who}",
              g.tools_for(["create_event"], 1), [("create_event", args)])


def choose_tool(g):
    r = g.rng
    cases = []
    for city in CITIES[:6]:
        cases.append((f"Is it raining in {city} at the moment?", "get_weather", {"city": ci(city)}))
    for city in CITIES[6:10]:
        cases.append((f"Will I need an umbrella in {city} this week? Check the 7-day outlook.",
                      "get_forecast", {"city": ci(city), "days": exact(7)}))
    for q in SEARCHES:
        cases.append((f"Look up {q} online.", "web_search", {"query": has(*q.split()[-2:])}))
    for value, src, dst in CONVERSIONS[:6]:
        cases.append((f"I need {value} {src} expressed in {dst}.", "convert_units",
                      {"value": num(value), "from_unit": ci(src), "to_unit": ci(dst)}))
    for path in FILES[3:8]:
        cases.append((f"What does {path} say?", "read_file", {"path": ci(path)}))
    for word in ["passport", "tomatoes", "budget", "Dune", "Harbor"]:
        cases.append((f"Find my notes that mention {word}.", "search_notes", {"query": has(word)}))
    for date in ["2025-03-14", "2025-06-11", "2025-09-23", "2025-12-24"]:
        cases.append((f"What's on my calendar on {date}?", "list_events", {"date": exact(date)}))
    for (name, addr) in PEOPLE[4:6]:
        cases.append((f"Send {addr} an email titled \"Hello\" that says hi from me.", "send_email",
                      {"to": ci(addr), "subject": ci("Hello"), "body": has("hi")}))
    for text, name, args in cases:
        g.add("choose_tool", text, g.tools_for([name], r.choice([4, 5, 6])), [(name, args)])


def two_calls(g):
    r = g.rng
    pairs = list(zip(CITIES[:6], CITIES[6:12]))
    for a, b in pairs:
        g.add("two_calls", f"What's the weather in {a} and in {b}?", g.tools_for(["get_weather"], 2),
              [("get_weather", {"city": ci(a)}), ("get_weather", {"city": ci(b)})])
    for (t1, b1, w1), (t2, b2, w2) in zip(NOTES[:4], NOTES[4:8]):
        g.add("two_calls", f"Make two notes: \"{t1}\" saying {b1}, and \"{t2}\" saying {b2}.",
              g.tools_for(["create_note"], 2),
              [("create_note", {"title": ci(t1), "body": has(*w1)}),
               ("create_note", {"title": ci(t2), "body": has(*w2)})])
    for (value, src, dst), (v2, s2, d2) in zip(CONVERSIONS[:4], CONVERSIONS[4:8]):
        g.add("two_calls", f"Convert {value} {src} to {dst}, and also {v2} {s2} to {d2}.",
              g.tools_for(["convert_units"], 2),
              [("convert_units", {"value": num(value), "from_unit": ci(src), "to_unit": ci(dst)}),
               ("convert_units", {"value": num(v2), "from_unit": ci(s2), "to_unit": ci(d2)})])
    for city, (title, date, time, _) in zip(CITIES[12:15], EVENTS[4:7]):
        g.add("two_calls",
              f"Add \"{title}\" to my calendar on {date} at {time}, and tell me the current weather in {city}.",
              g.tools_for(["create_event", "get_weather"], 2),
              [("create_event", {"title": ci(title), "date": exact(date), "time": exact(time)}),
               ("get_weather", {"city": ci(city)})])
    for path, q in zip(FILES[:4], SEARCHES[4:8]):
        g.add("two_calls", f"Read {path}, and search the web for {q}.",
              g.tools_for(["read_file", "web_search"], 2),
              [("read_file", {"path": ci(path)}), ("web_search", {"query": has(*q.split()[-2:])})])
    for (name, addr), (title, body, words) in zip(PEOPLE[:4], NOTES[6:10]):
        g.add("two_calls",
              f"Save a note \"{title}\" ({body}) and email {addr} with subject \"{title}\" and the same text.",
              g.tools_for(["create_note", "send_email"], 1),
              [("create_note", {"title": ci(title), "body": has(*words)}),
               ("send_email", {"to": ci(addr), "subject": ci(title), "body": has(*words)})])


def from_context(g):
    r = g.rng
    for city in CITIES[:6]:
        g.add("from_context", [f"I'm flying to {city} tomorrow for a conference.",
                               f"That sounds exciting! Is there anything I can help you prepare for {city}?",
                               "Yes: what's the weather there right now?"],
              g.tools_for(["get_weather"], 2), [("get_weather", {"city": ci(city)})])
    for (name, addr) in PEOPLE[:6]:
        g.add("from_context", [f"My colleague {name}'s address is {addr}.",
                               f"Noted: {name} is {addr}.",
                               f"Email {name} with the subject \"Slides\" and tell them the slides are ready."],
              g.tools_for(["send_email"], 2),
              [("send_email", {"to": ci(addr), "subject": ci("Slides"), "body": has("slides")})])
    for path in FILES[:6]:
        g.add("from_context", [f"The draft we worked on is saved at {path}.",
                               "Great, I'll remember that.",
                               "Open that file again, please."],
              g.tools_for(["read_file"], 2), [("read_file", {"path": ci(path)})])
    for value, src, dst in CONVERSIONS[:6]:
        g.add("from_context", [f"The recipe says {value} {src}, but I only understand {dst}.",
                               "I can convert that for you with the converter.",
                               "Go ahead."],
              g.tools_for(["convert_units"], 2),
              [("convert_units", {"value": num(value), "from_unit": ci(src), "to_unit": ci(dst)})])
    for (title, date, time, minutes) in EVENTS[:6]:
        g.add("from_context", [f"I have {title.lower()} on {date} at {time}.",
                               "Would you like me to add it to your calendar?",
                               f"Yes, add it, {minutes} minutes long."],
              g.tools_for(["create_event"], 2),
              [("create_event", {"title": has(title.split()[0]), "date": exact(date),
                                 "time": exact(time), "duration_minutes": exact(minutes)})])


def no_tool(g):
    r = g.rng
    questions = [
        "What is the capital of Australia?", "Explain what a prime number is in one sentence.",
        "What is 12 times 12?", "Translate 'good morning' into Spanish.",
        "Write a haiku about autumn leaves.", "Who wrote Pride and Prejudice?",
        "What does HTTP stand for?", "Give me a synonym for 'happy'.",
        "How many days are there in a leap year?", "Thanks, that's all for now!",
        "What is the boiling point of water at sea level in Celsius?",
        "Summarise the idea of photosynthesis in two sentences.",
        "Is a tomato a fruit or a vegetable?", "Hello! How are you today?",
        "What's the difference between 'affect' and 'effect'?",
        "Suggest a name for a grey cat.", "What is the plural of 'mouse'?",
        "Tell me a short joke about programmers.", "How do you say 'thank you' in Japanese?",
        "What is the square root of 81?", "Name three primary colours.",
        "Which planet is closest to the sun?", "Rewrite this more politely: 'Send it now.'",
        "What year did the Berlin Wall fall?", "Explain what a noun is to a child.",
    ]
    for q in questions:
        g.add("no_tool", q, g.tools_for([], r.choice([3, 4, 5])), [])


def missing_value(g):
    r = g.rng
    cases = [
        ("Send an email to my landlord about the broken heater.", ["send_email"]),
        ("Email the team that the meeting moved.", ["send_email"]),
        ("Send a message with the subject \"Update\" saying we shipped.", ["send_email"]),
        ("Add a dentist appointment to my calendar.", ["create_event"]),
        ("Schedule a call with Bo next week.", ["create_event"]),
        ("Put the team dinner in my calendar on 2025-05-02.", ["create_event"]),
        ("What's the weather like?", ["get_weather"]),
        ("Give me the forecast for the next few days.", ["get_forecast"]),
        ("Convert 12 into miles.", ["convert_units"]),
        ("Convert this to kilometres for me.", ["convert_units"]),
        ("How many pounds is that?", ["convert_units"]),
        ("Convert 30 degrees.", ["convert_units"]),
        ("Open the file.", ["read_file"]),
        ("Read my document, please.", ["read_file"]),
        ("Save this into a file.", ["write_file"]),
        ("Write 'hello' to a file.", ["write_file"]),
        ("Make a note.", ["create_note"]),
        ("Pin a note for me.", ["create_note"]),
        ("Search the web for me.", ["web_search"]),
        ("Find my notes.", ["search_notes"]),
    ]
    for text, main in cases:
        g.add("missing_value", text, g.tools_for(main, r.choice([1, 2, 3])), [])


def build():
    g = Items(seed=45)
    for make in (one_call, choose_tool, two_calls, from_context, no_tool, missing_value):
        make(g)
    g.items.sort(key=lambda item: item["id"])
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in g.items)


def main():
    text = build()
    if "--check" in sys.argv[1:]:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is not what {Path(__file__).name} writes; run it", file=sys.stderr)
            sys.exit(1)
        return
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    kinds = {}
    for line in text.splitlines():
        kind = json.loads(line)["kind"]
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"wrote {sum(kinds.values())} items to {OUT}: {kinds}")


if __name__ == "__main__":
    main()
