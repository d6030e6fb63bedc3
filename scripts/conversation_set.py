"""A frozen evaluation set of long everyday conversations between two friends (LoCoMo-like).

    python scripts/conversation_set.py --split dev  --out tests/data/conversations_dev.jsonl
    python scripts/conversation_set.py --split test --out tests/data/conversations_test.jsonl
    python scripts/conversation_set.py --split test --out tests/data/conversations_test.jsonl --check

How the set is made. Each conversation is two friends (first names from a pool of many
cultures) chatting over 10-14 dated sessions (2022-2024, days to weeks apart), 12-22
strictly alternating turns a session. Each speaker is given a life drawn from the split's
pools: a job and later a new one, maybe a pet that falls ill and recovers, two hobbies
taken up months apart, two trips, a family event, things bought, events attended, a dish
cooked, a book, a race, an injury, a move, a volunteering gig, a plan. Each of these is a
"beat": one informative turn stating it (one of at least four wordings, often with a
relative date such as "yesterday" or "last Saturday"), usually a friend's reaction and a
second informative turn adding detail. Around the beats goes small talk that carries no
fact of anyone's life: greetings, thanks, sympathy, compliments, reactions, questions to
the other speaker, hypotheticals ("If I had more time I'd ..."), encouragement, goodbyes.
Every turn is labelled ``informative``; about half the turns are small talk.

Questions (about 50 a conversation; each names its person by first name) are made from
the beats, worded apart from the turns they rest on (other verbs and nouns):
``single-hop`` (one evidence turn), ``multi-hop`` (two turns, often sessions apart: a job
then the next, a pet named in one session and ill in another, both hobbies, both trips),
``temporal`` (the gold answer is the date resolved from the session date and the turn's
relative phrase), ``open-domain`` (an inference from the evidence: "Would X cope with
heights?" after X took up climbing) and ``unanswerable`` (something plausible never said:
a pet, hobby, trip or relative from the split's pools that nobody in the conversation
has; no evidence). Target mix 30/20/20/15/15 %.

Split rule. Every content pool (names, jobs, pets, pet names, illnesses, hobbies,
places, relatives, objects, events, dishes, books, races, injuries, neighbourhoods,
volunteering places, plans, hypotheticals) is split in two at the top of this script:
``pool[::2]`` for ``dev``, ``pool[1::2]`` for ``test``; so are the question wordings.
``_check_disjoint`` asserts that no content word of a test value appears in a dev value.
Small talk (greetings, reactions...) carries no fact and is shared. ``dev`` (6
conversations) is for tuning; ``test`` (7 conversations) is frozen and never tuned on.

Determinism. Standard library only; ``random.Random`` seeded per split. The test split
is frozen: ``--check`` regenerates it in memory and compares it byte for byte with
``--out``, exiting 1 on any difference (so a change to this script that would change
the frozen set is caught).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

SEEDS = {"dev": 20240517, "test": 20240523}
CONVERSATIONS = {"dev": 6, "test": 7}
PREFIX = {"dev": "conv-d", "test": "conv-t"}
TARGETS = {"single-hop": 16, "multi-hop": 10, "temporal": 11, "open-domain": 8, "unanswerable": 8}


def _halves(pool: Sequence[Any]) -> dict[str, list[Any]]:
    """The split rule: even positions for dev, odd for test."""
    return {"dev": list(pool[::2]), "test": list(pool[1::2])}


# ---------------------------------------------------------------- content pools (split)

NAMES = _halves([
    "Priya", "Mateo", "Oluwaseun", "Ingrid", "Kenji", "Amara", "Lukas", "Sofia", "Tariq", "Mei",
    "Dmitri", "Leilani", "Aisha", "Bjorn", "Camila", "Hamid", "Noor", "Tomasz", "Yuki", "Esperanza",
    "Kwame", "Freya", "Rafael", "Anjali", "Siobhan", "Jae-won", "Zainab", "Emeka", "Marisol", "Aleksander",
])  # fmt: skip

# (title, workplace, detail, inference question, inference answer)
JOBS = _halves([
    ("paediatric nurse", "St Brigid's children's hospital", "I'm on nights for the first month, which is brutal",
     "Would {P} likely know what to do if a toddler ran a high fever?", "Yes, probably: {P} is a paediatric nurse."),
    ("sous chef", "a little Basque tapas bar downtown", "the head chef already lets me run the grill on Fridays",
     "Would {P} be a good person to plan the menu for a big dinner party?",
     "Yes: {P} cooks professionally as a sous chef."),
    ("primary school teacher", "Greenfield Primary", "I've got twenty-eight eight-year-olds, pray for me",
     "Is {P} likely to be patient with young kids?", "Probably yes: {P} teaches at a primary school."),
    ("structural engineer", "a bridge consultancy", "I'm mostly checking load calculations for a footbridge",
     "Would {P} probably be comfortable with maths-heavy work?", "Yes: {P} is a structural engineer."),
    ("junior architect", "a firm that plans museums", "my first project is a museum extension, no pressure",
     "Would {P} likely enjoy a city tour focused on buildings?", "Probably yes: {P} works as an architect."),
    ("paramedic", "the county ambulance service", "twelve-hour shifts, but the crew is great",
     "Would {P} stay calm at the scene of a car accident?", "Likely yes: {P} is a paramedic."),
    ("data analyst", "a grocery delivery startup", "I spend all day in spreadsheets and dashboards",
     "Would {P} likely be handy with spreadsheets?", "Yes: {P} is a data analyst."),
    ("physiotherapist", "a sports injury clinic", "it's mostly footballers with dodgy knees",
     "Would {P} be a good person to ask about a sore knee?", "Yes: {P} is a physiotherapist."),
    ("bookshop manager", "an independent shop on Mill Lane", "I get to pick which new releases go in the window",
     "Would {P} have good novel recommendations?", "Probably yes: {P} runs a bookshop."),
    ("pharmacist", "the late-night chemist near the station", "the evening rush is wild but I like the regulars",
     "Would {P} know about the side effects of common medicines?", "Yes: {P} is a pharmacist."),
    ("flight attendant", "a regional airline", "I've already done four countries in two weeks",
     "Is {P} likely to be used to jet lag?", "Yes: {P} works as a flight attendant."),
    ("carpenter", "a workshop that builds custom kitchens", "my hands are covered in splinters but I love it",
     "Could {P} probably fix a wobbly table?", "Very likely: {P} is a carpenter."),
    ("court interpreter", "the regional magistrates' court", "I translate for witnesses, it's intense",
     "Does {P} probably speak more than one language?", "Yes: {P} works as an interpreter."),
    ("marine biologist", "the coastal research station", "we count seals from a boat three mornings a week",
     "Would {P} probably enjoy a visit to an aquarium?", "Likely yes: {P} is a marine biologist."),
    ("game tester", "a studio making racing games", "I literally get paid to crash cars all day",
     "Is {P} likely to know a lot about video games?", "Yes: {P} tests video games for a living."),
    ("dental hygienist", "a family practice on Elm Road", "everyone asks me if they should floss more (yes)",
     "Would {P} have advice on keeping teeth healthy?", "Yes: {P} is a dental hygienist."),
])  # fmt: skip

# (species, how it is said, the kind (gold answer), question noun, inference question, inference answer)
PETS = _halves([
    ("dog", "beagle puppy", "A beagle", "dog", "Does {P} probably go out for walks every day?",
     "Yes: {P} has a dog to walk."),
    ("cat", "Maine Coon kitten", "A Maine Coon", "cat", "Would {P} need someone to feed a pet when away?",
     "Yes: {P} has a cat."),
    ("dog", "border collie puppy", "A border collie", "dog",
     "Does {P} probably spend a lot of time outdoors with a pet?",
     "Likely yes: {P} has a border collie, a very energetic breed."),
    ("cat", "Siamese kitten", "A Siamese", "cat", "Is {P} likely allergic to cats?",
     "Probably not: {P} has one at home."),
    ("rabbit", "Holland Lop bunny", "A Holland Lop", "rabbit", "Does {P} probably buy a lot of hay?",
     "Likely yes: {P} keeps a rabbit."),
    ("tortoise", "Hermann's tortoise hatchling", "A Hermann's tortoise", "reptile",
     "Does {P} have a pet that will likely live for decades?",
     "Yes: {P} has a tortoise, which can live over fifty years."),
    ("budgie", "young budgie", "A budgie (parakeet)", "bird", "Does {P} probably hear chirping at home?",
     "Yes: {P} has a budgie."),
    ("ferret", "albino ferret", "An albino ferret", "furry pet", "Would {P} need a carefully escape-proofed flat?",
     "Likely yes: {P} keeps a ferret, and they squeeze through any gap."),
])  # fmt: skip
PET_NAMES = _halves([
    ("Biscuit", "her"), ("Pickle", "him"), ("Mochi", "her"), ("Waffles", "him"), ("Pepper", "her"), ("Noodle", "him"),
    ("Clementine", "her"), ("Ziggy", "him"), ("Juniper", "her"), ("Bartholomew", "him"), ("Olive", "her"),
    ("Gizmo", "him"), ("Luna", "her"), ("Tofu", "him"), ("Hazel", "her"), ("Rocket", "him"),
])  # fmt: skip
# (what the vet found, question paraphrase)
ILLNESSES = _halves([
    ("an ear infection", "an infection in the ears"), ("a nasty stomach bug", "a digestive upset"),
    ("a sprained paw from jumping off the sofa", "an injured paw"),
    ("a swallowed sock, it needed surgery", "a blockage"),
    ("an eye infection", "a problem with the eyes"), ("a tooth abscess", "a dental problem"),
    ("kennel cough", "a cough"), ("a bladder stone", "a urinary problem"),
])  # fmt: skip
# (how it is said, what it is, detail, question noun, inference question, inference answer)
HOBBIES = _halves([
    ("started pottery classes on Tuesday evenings", "pottery", "my first bowl came out totally lopsided lol",
     "craft", "Would {P} enjoy a gift voucher for a ceramics studio?", "Probably yes: {P} took up pottery."),
    ("joined a bouldering gym", "bouldering", "my forearms are dead but I finally got up a purple route",
     "sport", "Is {P} likely comfortable with heights?", "Probably yes: {P} climbs at a bouldering gym."),
    ("signed up for salsa lessons", "salsa dancing", "I stepped on my partner's foot about forty times",
     "dance", "Would {P} enjoy a night out at a Latin music club?", "Likely yes: {P} takes salsa lessons."),
    ("bought a sourdough starter and started baking bread", "bread baking", "the third loaf actually rose!",
     "kitchen", "Would {P} appreciate a good bread knife as a present?", "Probably yes: {P} bakes bread now."),
    ("picked up the ukulele", "ukulele", "I can do three chords and one very bad song",
     "instrument", "Would {P} enjoy an open mic evening?", "Possibly yes: {P} is learning the ukulele."),
    ("started birdwatching at the reservoir", "birdwatching", "I saw a kingfisher and nearly cried",
     "outdoor", "Would {P} like a pair of binoculars as a gift?", "Yes, likely: {P} goes birdwatching."),
    ("joined a Thursday night chess club", "chess", "an eleven-year-old destroyed me in twelve moves",
     "game", "Would {P} enjoy a strategy board game evening?", "Probably yes: {P} plays club chess."),
    ("took up trail running", "trail running", "the hills nearly killed me but the view was worth it",
     "exercise", "Would {P} enjoy a hiking holiday?", "Probably yes: {P} runs trails in the hills."),
    ("started watercolour painting", "watercolours", "I painted the view from my window, it's... abstract",
     "art", "Would {P} enjoy a visit to an art supply shop?", "Likely yes: {P} paints watercolours."),
    ("began learning to knit", "knitting", "my scarf is now three metres long and still going",
     "handicraft", "Would {P} appreciate a gift of nice wool?", "Probably yes: {P} knits."),
    ("joined an amateur choir", "choir singing", "we're doing a gospel arrangement and I'm a tenor apparently",
     "music", "Would {P} enjoy going to a choral concert?", "Likely yes: {P} sings in a choir."),
    ("started open-water swimming in the lake", "open-water swimming", "it's freezing but I feel amazing after",
     "water", "Is {P} likely to cope well with cold water?", "Yes: {P} swims outdoors in the lake."),
    ("got into growing tomatoes and chillies on the balcony", "balcony gardening", "we have eleven chillies so far",
     "garden", "Would {P} like a packet of unusual seeds?", "Probably yes: {P} grows vegetables on the balcony."),
    ("started woodcarving little spoons", "spoon carving", "I have a plaster on every finger",
     "woodworking", "Would {P} want a sharp whittling knife?", "Likely yes: {P} carves wooden spoons."),
    ("joined a rowing club", "rowing", "6am on the river is brutal but the sunrise, wow",
     "water sport", "Is {P} likely to be an early riser these days?", "Probably yes: {P} rows at 6am."),
    ("started learning calligraphy", "calligraphy", "I've filled a whole notebook with the letter g",
     "writing", "Would {P} like a set of fancy fountain pens?", "Probably yes: {P} practises calligraphy."),
])  # fmt: skip
# (destination, what they did there, detail, inference question, inference answer)
TRIPS = _halves([
    ("Lisbon", "ate way too many custard tarts", "the trams up the hills were packed but so pretty",
     "Would {P} be able to give tips about Portugal?", "Yes, some: {P} has been to Lisbon."),
    ("Kyoto", "saw the bamboo forest at sunrise", "we stayed in a tiny ryokan with paper walls",
     "Has {P} probably tried Japanese food in Japan?", "Very likely: {P} travelled to Kyoto."),
    ("the Scottish Highlands", "hiked up to a loch in the rain", "the midges were unreal",
     "Would {P} know what Scottish weather is like?", "Yes: {P} went hiking in the Highlands in the rain."),
    ("Marrakech", "got lost in the souks for hours", "I haggled for a rug and definitely overpaid",
     "Has {P} probably visited North Africa?", "Yes: {P} went to Marrakech in Morocco."),
    ("Iceland", "watched the northern lights", "we drove the ring road in a tiny rental car",
     "Would {P} be prepared for a cold-weather holiday?", "Likely yes: {P} has travelled in Iceland."),
    ("Mexico City", "had tacos al pastor every single day", "the murals in the old town blew my mind",
     "Would {P} enjoy a Mexican cooking class?", "Probably yes: {P} loved the food in Mexico City."),
    ("the Amalfi Coast", "took a boat between the villages", "the lemon everything, I'm obsessed",
     "Has {P} probably visited southern Italy?", "Yes: {P} went to the Amalfi Coast."),
    ("Vancouver", "kayaked around Stanley Park", "I saw a seal pop up right next to the boat",
     "Has {P} been to Canada?", "Yes: {P} visited Vancouver."),
    ("Istanbul", "took a ferry across the Bosphorus", "the spice market smelled incredible",
     "Would {P} be a good person to ask about visiting Turkey?", "Yes: {P} has been to Istanbul."),
    ("New Zealand", "did a glacier walk", "we camped most nights in a borrowed van",
     "Is {P} likely comfortable with camping?", "Probably yes: {P} camped through New Zealand."),
])  # fmt: skip
# (relative, what happened, sentiment, question)
FAMILY = _halves([
    ("sister", "got engaged to her girlfriend", "pos", "Which of {P}'s relatives is getting married?"),
    ("brother", "had a baby girl", "pos", "Who in {P}'s family became a parent recently?"),
    ("grandmother", "had a fall and broke her hip", "neg", "Which family member of {P}'s was hurt in an accident?"),
    ("uncle", "retired after thirty-five years at the post office", "pos", "Which of {P}'s relatives stopped working?"),
    ("cousin", "moved to Australia for work", "neu", "Which relative of {P}'s emigrated?"),
    ("dad", "had heart surgery", "neg", "Which parent of {P}'s needed an operation?"),
    ("aunt", "opened a flower shop", "pos", "Which of {P}'s relatives started a business?"),
    ("nephew", "graduated with a law degree", "pos", "Which of {P}'s relatives finished a degree?"),
    ("mum", "started chemo", "neg", "Which family member of {P}'s is being treated for cancer?"),
    ("stepfather", "won a local baking competition", "pos", "Which of {P}'s relatives won a contest?"),
])  # fmt: skip
# (object bought, why / detail, question)
PURCHASES = _halves([
    ("a secondhand cello", "I played as a kid and I miss it", "What instrument did {P} buy?"),
    ("an electric cargo bike", "so I can stop driving to the shops", "What did {P} get to avoid using the car?"),
    ("a proper espresso machine", "no more sad office coffee", "What kitchen appliance did {P} invest in?"),
    ("a vintage film camera", "the first roll comes back next week", "What photography gear did {P} pick up?"),
    ("a standing desk", "my back was killing me from working at the sofa", "What furniture did {P} buy for work?"),
    ("a tent for two", "we want to go camping more this summer", "What outdoor equipment did {P} buy?"),
    ("an old sewing machine from a car boot sale", "I want to fix my own clothes", "What did {P} find at a sale?"),
    ("a telescope", "Saturn's rings were visible from the garden!", "What did {P} buy to look at the sky?"),
    ("a second-hand piano", "it took four people to get it up the stairs", "What large instrument did {P} buy?"),
    ("a kayak", "it barely fits on the car roof", "What boat did {P} buy?"),
])  # fmt: skip
# (event attended, detail, question)
EVENTS = _halves([
    ("a jazz festival by the river", "a saxophonist played for like twenty minutes straight",
     "What music event did {P} go to?"),
    ("my best friend's wedding in the countryside", "I gave a speech and didn't cry (much)",
     "Whose wedding did {P} attend?"),
    ("a stand-up comedy night", "I laughed so hard my stomach hurt", "What kind of live show did {P} see?"),
    ("a food truck market", "I tried Korean fried chicken tacos", "What food event did {P} go to?"),
    ("a Coldplay concert", "the light-up wristbands were so cool", "Which band did {P} see live?"),
    ("a pub quiz fundraiser", "our team came second, robbed on the last round", "What charity event was {P} at?"),
    ("a science museum late night", "there was a planetarium show with cocktails",
     "What museum evening did {P} go to?"),
    ("an open-air Shakespeare play", "it rained through Act Two and nobody left", "What theatre did {P} watch?"),
    ("a street dance battle", "the kids there were unbelievably talented", "What competition did {P} watch?"),
    ("a ballet performance of Swan Lake", "I got goosebumps at the end", "What ballet did {P} see?"),
])  # fmt: skip
# (dish, occasion)
DISHES = _halves([
    ("lasagna from scratch", "for my housemates"), ("a Thai green curry", "for a date night"),
    ("jollof rice", "for a family birthday"), ("homemade dumplings", "for the Lunar New Year"),
    ("a massive paella", "for the neighbours"), ("a beef rendang", "for a potluck"),
    ("pierogi", "with my grandmother's recipe"), ("a lemon drizzle cake", "for a colleague's leaving do"),
    ("shakshuka", "for a lazy Sunday brunch"), ("butter chicken", "for a dinner party"),
])  # fmt: skip
# (book, genre word for the question)
BOOKS = _halves([
    ("The Salt Orchard", "novel"), ("Tides of Ash", "fantasy book"), ("The Clockmaker's Daughter", "mystery"),
    ("Notes from a Small Kitchen", "memoir"), ("A Field Guide to Wandering", "poetry collection"),
    ("The Last Ferryman", "thriller"), ("Ten Thousand Mornings", "biography"),
    ("Under the Copper Moon", "romance"),
])  # fmt: skip
# (race, result, question)
RACES = _halves([
    ("my first half marathon", "two hours and four minutes", "How long did {P} take to finish the long race?"),
    ("a 10k road race", "fifty-two minutes, a personal best", "What time did {P} get over ten kilometres?"),
    ("a sprint triathlon", "I came 14th in my age group", "How did {P} place in the triathlon?"),
    ("a 100-mile cycling sportive", "seven and a half hours, including cake stops", "How long was {P}'s bike ride?"),
    ("a Saturday parkrun", "my fastest 5k ever, 24:30", "What was {P}'s best time over five kilometres?"),
    ("an obstacle mud race", "I finished covered in mud from head to toe", "What muddy event did {P} do?"),
])  # fmt: skip
# (injury, how, question)
INJURIES = _halves([
    ("sprained my ankle", "playing five-a-side football", "How did {P} hurt a leg?"),
    ("broke my wrist", "falling off my bike on ice", "What caused {P}'s broken bone?"),
    ("pulled a muscle in my back", "lifting a sofa for my neighbour", "How did {P} injure the back?"),
    ("cut my thumb badly", "slicing an avocado", "What kitchen accident did {P} have?"),
    ("twisted my knee", "skiing down a red slope", "Where did {P} hurt a knee?"),
    ("got a concussion", "hitting my head on a cupboard door", "How did {P} get a head injury?"),
])  # fmt: skip
# (neighbourhood / place moved to, detail)
HOMES = _halves([
    ("a flat in Riverside", "it has a tiny balcony over the canal"),
    ("a terraced house on Oak Avenue", "the garden is a jungle right now"),
    ("a studio near the university", "it's small but the light is gorgeous"),
    ("a cottage outside town", "the nearest shop is a twenty-minute walk"),
    ("a loft above a bakery", "I wake up to the smell of croissants"),
    ("a two-bed in Harbourside", "we finally have a spare room for guests"),
])  # fmt: skip
# (where they volunteer, what they do)
VOLUNTEER = _halves([
    ("the animal shelter", "walking the dogs on Sundays"), ("a food bank", "sorting donations on Saturdays"),
    ("a literacy charity", "reading with kids after school"), ("the community garden", "building raised beds"),
    ("a hospice", "serving tea in the afternoons"), ("a refugee centre", "teaching English conversation"),
])  # fmt: skip
# (plan, question, answer)
PLANS = _halves([
    ("apply for a master's in urban planning", "What postgraduate course is {P} thinking about?",
     "A master's in urban planning"),
    ("save up to walk the Camino de Santiago", "What long walk does {P} hope to do?", "The Camino de Santiago"),
    ("learn Portuguese properly", "Which language does {P} want to study?", "Portuguese"),
    ("get my motorbike licence", "What licence is {P} working towards?", "A motorbike licence"),
    ("run a marathon before I turn forty", "What running goal has {P} set?", "Running a marathon before forty"),
    ("take a sabbatical and volunteer abroad", "What does {P} want to do with time off work?",
     "Take a sabbatical and volunteer abroad"),
])  # fmt: skip
HYPOTHETICALS = _halves([
    "If I had more time I'd learn to sail.", "Honestly if money were no object I'd open a little cafe.",
    "Sometimes I think I should've become a vet.", "If I could live anywhere I'd pick somewhere by the sea.",
    "One day I want to try skydiving. Maybe. Probably not.", "If I were braver I'd try improv theatre.",
    "In another life I'd be a lighthouse keeper.", "Imagine just quitting everything and opening a surf shack.",
    "If I ever hit the jackpot I'd buy a vineyard, obviously.", "Part of me wants to fly helicopters someday.",
    "If I ever retire early I'm building a treehouse.", "I've always fancied becoming a beekeeper, no idea why.",
    "If the days were longer I'd study astronomy.", "One day I'll open a little bed and breakfast.",
    "Sometimes I dream about sailing the Greek islands for a summer.", "If I were twenty again I'd give acting a go.",
])  # fmt: skip

# ------------------------------------------------------------- question wordings (split)

Q_SINGLE = {
    "job_now": _halves(
        [
            "What does {P} do for a living now?",
            "Which profession is {P} in at the moment?",
            "What is {P}'s current occupation?",
            "How does {P} earn a living these days?",
        ]
    ),
    "job_before": _halves(
        [
            "Where was {P} employed before changing jobs?",
            "Which employer did {P} leave?",
            "Before the career move, where did {P} work?",
            "What was {P}'s previous workplace?",
        ]
    ),
    "pet_kind": _halves(
        [
            "What kind of {noun} did {P} get?",
            "What breed is {P}'s new {noun}?",
            "Which type of {noun} joined {P}'s household?",
            "What sort of {noun} does {P} own?",
        ]
    ),
    "pet_name": _halves(
        [
            "What is the name of {P}'s {noun}?",
            "What did {P} call the new {noun}?",
            "What's {P}'s {noun} called?",
            "How did {P} name the {noun}?",
        ]
    ),
    "hobby": _halves(
        [
            "What new {noun} hobby did {P} pick up?",
            "Which {noun} pastime has {P} been trying?",
            "What {noun} activity did {P} take up recently?",
            "Which {noun} pursuit is {P} learning?",
        ]
    ),
    "trip": _halves(
        [
            "Where did {P} go on holiday?",
            "Which destination did {P} visit on the trip?",
            "What place did {P} travel to?",
            "Where was {P}'s vacation?",
        ]
    ),
    "trip_what": _halves(
        [
            "What did {P} do while in {dest}?",
            "What was a highlight of {P}'s time in {dest}?",
            "What activity did {P} enjoy during the visit to {dest}?",
            "What memorable thing happened to {P} in {dest}?",
        ]
    ),
    "dish": _halves(
        [
            "What did {P} make {occasion}?",
            "Which meal did {P} prepare {occasion}?",
            "What food did {P} serve {occasion}?",
            "What was on the menu when {P} cooked {occasion}?",
        ]
    ),
    "book": _halves(
        [
            "What {noun} has {P} been reading?",
            "Which {noun} did {P} get through recently?",
            "What is the title of the {noun} {P} read?",
            "Which {noun} was {P} hooked on?",
        ]
    ),
    "home": _halves(
        [
            "Where does {P} live now?",
            "What kind of place did {P} move into?",
            "Where is {P}'s new home?",
            "What sort of home is {P} in after the move?",
        ]
    ),
    "volunteer": _halves(
        [
            "Where does {P} give time for free?",
            "Which organisation does {P} help out at?",
            "Where does {P} do unpaid work?",
            "What charity does {P} support with time?",
        ]
    ),
}
Q_TEMPORAL = {
    "job_start": _halves(
        [
            "When did {P} begin working at {place}?",
            "On what date was {P}'s first day at {place}?",
            "When did {P} join {place}?",
            "When did {P}'s job at {place} begin?",
        ]
    ),
    "job_change": _halves(
        [
            "When did {P} get the news about the new job?",
            "When did {P} land the new role?",
            "When did {P} accept the job offer?",
            "When was {P} hired for the new position?",
        ]
    ),
    "pet_adopt": _halves(
        [
            "When did {P} bring {pet} home?",
            "When did {pet} come to live with {P}?",
            "When did {P} get {pet}?",
            "When did {P} welcome {pet} into the family?",
        ]
    ),
    "pet_sick": _halves(
        [
            "When did {P} take {pet} to the vet?",
            "When was {pet}'s vet appointment?",
            "When did {P} find out {pet} was unwell?",
            "When did {pet} see the animal doctor?",
        ]
    ),
    "hobby": _halves(
        [
            "When did {P} start {hobby}?",
            "When did {P} first try {hobby}?",
            "When did {P} take up {hobby}?",
            "When did {P} get into {hobby}?",
        ]
    ),
    "trip": _halves(
        [
            "When did {P} come back from {dest}?",
            "When did {P} return home from {dest}?",
            "When did {P}'s {dest} holiday end?",
            "When did {P} get home after {dest}?",
        ]
    ),
    "family": _halves(
        [
            "When did {P} hear the news about the {rel}?",
            "When did {P}'s {rel}'s news happen?",
            "When did things happen with {P}'s {rel}?",
            "When did {P}'s {rel} have the big news?",
        ]
    ),
    "purchase": _halves(
        [
            "When did {P} buy {obj}?",
            "When did {P} get hold of {obj}?",
            "When did {P} purchase {obj}?",
            "When did {obj} arrive in {P}'s life?",
        ]
    ),
    "event": _halves(
        ["When did {P} go to {ev}?", "When was {P} at {ev}?", "When did {P} attend {ev}?", "When did {P} see {ev}?"]
    ),
    "race": _halves(
        [
            "When did {P} do {race_q}?",
            "When did {P} complete {race_q}?",
            "When did {P} take part in {race_q}?",
            "When did {P} finish {race_q}?",
        ]
    ),
    "injury": _halves(
        [
            "When did {P} get hurt?",
            "When did {P}'s accident happen?",
            "When was {P} injured?",
            "When did {P} have the mishap?",
        ]
    ),
    "home": _halves(
        [
            "When did {P} move house?",
            "When did {P} relocate?",
            "When did {P} change address?",
            "When did {P} settle into the new place?",
        ]
    ),
}
Q_MULTI = {
    "jobs": _halves(
        [
            "What did {P} do before switching careers, and what does {P} do now?",
            "Which two jobs has {P} held during these chats?",
            "Trace {P}'s career: the old role and the new one?",
            "What was {P}'s job at first and what was it later?",
        ]
    ),
    "pet_ill": _halves(
        [
            "What health problem did {P}'s {noun} have?",
            "Why did {P}'s {noun} need the vet?",
            "What was wrong with {P}'s {noun}?",
            "What illness did {P}'s {noun} suffer from?",
        ]
    ),
    "pet_outcome": _halves(
        [
            "How did things turn out after {P}'s {noun} fell ill?",
            "Did {P}'s {noun} get better after being ill?",
            "What was the outcome of {P}'s {noun}'s illness?",
            "Is {P}'s {noun} healthy again after the vet visit?",
        ]
    ),
    "hobbies": _halves(
        [
            "Which two pastimes has {P} taken up over these months?",
            "Name both new hobbies {P} started.",
            "What two new activities did {P} begin?",
            "List the hobbies {P} picked up.",
        ]
    ),
    "trips": _halves(
        [
            "Which two places did {P} travel to?",
            "Name both destinations {P} visited.",
            "Where has {P} been on holiday, twice?",
            "What were the two trips {P} took?",
        ]
    ),
}
Q_UNANSWERABLE = {
    "pet": _halves(
        [
            "What is the name of {P}'s {species}?",
            "What breed is {P}'s {species}?",
            "How old is {P}'s {species}?",
            "Where did {P} get the {species} from?",
        ]
    ),
    "hobby": _halves(
        [
            "When did {P} start {hobby}?",
            "How long has {P} been doing {hobby}?",
            "Who taught {P} {hobby}?",
            "Why did {P} give up {hobby}?",
        ]
    ),
    "trip": _halves(
        [
            "What did {P} do in {dest}?",
            "Who went with {P} to {dest}?",
            "How long did {P} stay in {dest}?",
            "What did {P} think of {dest}?",
        ]
    ),
    "relative": _halves(
        [
            "What is the name of {P}'s {rel}?",
            "Where does {P}'s {rel} live?",
            "What does {P}'s {rel} do for work?",
            "How old is {P}'s {rel}?",
        ]
    ),
    "purchase": _halves(
        [
            "Why did {P} buy {obj}?",
            "How much did {P} pay for {obj}?",
            "Where did {P} get {obj}?",
            "Does {P} still use {obj}?",
        ]
    ),
}

# --------------------------------------------------------------------- shared small talk

GREETINGS = [
    "Hey {O}! How's your week been?",
    "Hi {O} 👋 long time no chat!",
    "Morning {O}! Got a minute to catch up?",
    "{O}!! I feel like we haven't talked in ages.",
    "hey you, how are things?",
    "Hi {O}, hope you're doing well!",
    "Evening {O} — finally a quiet moment to message you.",
    "Hey hey! Is now a good time?",
]
GREETING_REPLIES = [
    "Hey {O}! So good to hear from you.",
    "Hi! Busy as always, but good. You?",
    "Hey {O}, yes, perfect timing 😊",
    "Always a good time for you! How are you?",
    "hiii, I was literally about to text you",
    "Hello! All good here, mostly.",
    "Hi {O}! It really has been a while.",
    "Heyyy. Surviving, thanks for asking!",
]
FAREWELLS = [
    "Anyway, I should get going — talk soon!",
    "Gotta run, dinner's ready. Take care, {O}!",
    "Ok I need to sleep lol. Night {O}!",
    "Right, back to the chaos. Speak soon!",
    "I'll let you go. Catch up soon?",
    "Have to dash, but this was lovely. Bye {O}!",
    "My battery's dying, talk later!",
]
FAREWELL_REPLIES = [
    "Bye! Say hi to everyone for me.",
    "Talk soon 😊",
    "Take care, {O}!",
    "Night night!",
    "Yes! Let's not leave it so long.",
    "Bye {O}, have a good one!",
    "Speak soon x",
]
REACTIONS = {
    "pos": [
        "Wow, that's amazing!",
        "Congrats, {O}! You totally deserve it.",
        "Love that for you 🙌",
        "Oh that's so exciting!",
        "No way, that's brilliant!",
        "Yesss, so happy for you!",
        "That's fantastic news, {O}.",
        "omg amazing 🎉",
        "Good for you! Honestly.",
        "That sounds wonderful.",
    ],
    "neg": [
        "Oh no, I'm so sorry, {O}.",
        "That must have been so hard for you, {O}.",
        "Ugh, that's awful. Sending hugs.",
        "Oh {O}, that's rough. How are you holding up?",
        "I'm really sorry to hear that.",
        "oh no 😢",
        "That sounds so stressful.",
        "Poor you, that's horrible.",
    ],
    "fun": [
        "Ooh fun!",
        "Ha, love it.",
        "That sounds like a great time.",
        "Jealous!",
        "Nice one 😄",
        "Okay that's very you.",
        "Living your best life, {O}.",
        "Ha! Amazing.",
    ],
    "relief": [
        "Oh thank goodness!",
        "Phew, that's such a relief.",
        "Yay, so glad {pet} is ok!",
        "Aww, give {pet} a cuddle from me.",
    ],
    "neu": [
        "Ha, nice.",
        "Oh cool, tell me more!",
        "Interesting!",
        "Oh really? How come?",
        "Huh, I didn't see that coming.",
        "Fair enough!",
        "Oh nice, I like that.",
        "Ooh.",
    ],
}
FOLLOW_UPS = {
    "job": ["How are the new colleagues?", "What's the work actually like?", "Is it what you expected?"],
    "pet": ["Aww! How is {pet} settling in?", "Pics or it didn't happen 😄", "How's {pet} doing?"],
    "pet_sick": ["Is {pet} going to be ok?", "What did the vet say?", "Poor {pet}! How is he/she now?"],
    "hobby": ["How's it going so far?", "Are you enjoying it?", "Is it hard?"],
    "trip": ["How was it?", "Best bit?", "Did you have a good time?"],
    "generic": ["Tell me everything.", "Oh yeah? Go on.", "And?", "How come?", "Wait, really?"],
}
PROMPTS = {
    "job": ["How's work treating you?", "Anything new on the job front?", "How's work been?"],
    "pet": ["Anything new at home?", "How's life at your place?", "What's new with you?"],
    "trip": ["Did you end up going anywhere nice?", "Been anywhere fun lately?", "Any travels recently?"],
    "hobby": ["Been up to anything fun in the evenings?", "Doing anything for yourself lately?"],
    "generic": [
        "What's new with you?",
        "And you? What's been going on?",
        "How about you, anything to report?",
        "Your turn — what's new?",
        "How have you been, really?",
    ],
}
FILLER_PAIRS = [
    ("The weather has been so grey lately, I'm craving sunshine.", "Same! I've forgotten what the sun looks like."),
    ("Thanks again for checking in on me last time, it meant a lot.", "Of course! That's what friends are for."),
    ("You always give the best advice, you know that?", "Stop it, you'll make me blush 😊"),
    ("I've been so tired this week, no idea why.", "Be kind to yourself, you do a lot."),
    (
        "Have you watched anything good lately? I need recommendations.",
        "Hmm, not really, I keep rewatching old stuff lol",
    ),
    ("Honestly talking to you always cheers me up.", "Aww, likewise!"),
    ("Can you believe how fast this year is going?", "Right?! It's terrifying."),
    ("Remind me to send you that recipe later.", "Yes please, don't forget!"),
]
HYPO_REPLIES = [
    "Ha, I can totally see that!",
    "You should! Why not?",
    "Honestly you'd be great at it.",
    "I'd visit you every week lol",
    "Maybe one day 😄",
    "Life's short, go for it!",
]
ENCOURAGE = [
    "You've got this, {O}!",
    "I'm proud of you, seriously.",
    "Keep going, it'll get easier.",
    "Fingers crossed for you!",
    "You'll be brilliant.",
]

# ---------------------------------------------------------------- informative templates

WHEN = [  # (phrase, resolver kind, argument)
    ("yesterday", "days", 1),
    ("two days ago", "days", 2),
    ("three days ago", "days", 3),
    ("this morning", "days", 0),
    ("last Saturday", "weekday", 5),
    ("last Sunday", "weekday", 6),
    ("on Friday", "weekday", 4),
    ("last Wednesday", "weekday", 2),
    ("last weekend", "weekend", 0),
    ("last week", "week", 0),
    ("last month", "month", 0),
]
FACT_TEMPLATES: dict[str, list[str]] = {
    "job_start": [
        "Big news: {when} I started as {a_title} at {place}!",
        "so {when} was my first day as {a_title} at {place}, still a bit overwhelmed tbh",
        "I've officially joined {place} — I'm {a_title} there now. Started {when}.",
        "Started the new role {when}: {a_title} at {place}. The team seems lovely so far.",
        "Guess who's {a_title} at {place} now 😄 first shift was {when}",
    ],
    "job_change": [
        "So I handed in my notice at {old_place}. {When_cap} they offered me a job as {a_title} at {place}!",
        "Career plot twist: I got an offer {when} to be {a_title} at {place}, and I said yes.",
        "I'm leaving {old_place}! Signed the contract {when} — {a_title} at {place}.",
        "{When_cap} I accepted a position as {a_title} at {place}. Scary but exciting.",
    ],
    "pet_adopt": [
        "I finally adopted a {said} {when}, we named {pron} {pet}!",
        "Meet {pet} 🐾 — {pron_s}'s a {said} and {pron_s} came home with me {when}.",
        "{When_cap} we picked up a little {said} from a rescue. {pet} is already ruling the flat.",
        "so um. I got a {said} {when}. {pron_s_cap}'s called {pet} and I'm obsessed",
    ],
    "pet_sick": [
        "{pet} has been so poorly. Took {pron} to the vet {when} and it's {illness}.",
        "Rough few days — the vet said {when} that {pet} has {illness}.",
        "{When_cap} I had to rush {pet} to the vet: {illness}. I was a wreck.",
        "Poor {pet}. Turns out it's {illness}, we found out {when}.",
    ],
    "pet_recover": [
        "Good news: {pet} is completely better, the vet gave {pron} the all-clear!",
        "{pet} is back to {pron_pos} old self, zooming around like nothing happened.",
        "Update on {pet}: fully recovered 🥳 thanks for asking about {pron} last time.",
        "{pet} finished the meds and is totally healthy again.",
    ],
    "hobby": [
        "I {act} {when}, finally!",
        "{When_cap} I {act}. Don't laugh.",
        "New thing: I {act}! First go was {when}.",
        "ok so I {act} {when} 🙈",
        "Guess what, I {act}. Went for the first time {when}.",
    ],
    "trip": [
        "Just got back from {dest} {when}! We {did}.",
        "Got home from {dest} {when}. Still dreaming about it — we {did}.",
        "{When_cap} I flew back from {dest}. Highlight: we {did}.",
        "back from {dest} as of {when} 😭 we {did} and I want to go again",
    ],
    "family": [
        "Family news: my {rel} {event} {when}.",
        "So {when} my {rel} {event}. Still processing it.",
        "My {rel} {event} — we found out {when}.",
        "{When_cap} my {rel} {event}, can you believe it?",
    ],
    "purchase": [
        "I bought {obj} {when}. {why_cap}.",
        "Treated myself to {obj} {when} — {why}.",
        "{When_cap} I finally got {obj}, because {why}.",
        "Impulse buy alert: {obj}, {when}. In my defence, {why}.",
    ],
    "event": [
        "Went to {ev} {when}, what a night.",
        "{When_cap} I was at {ev}!",
        "I ended up at {ev} {when}, totally last minute.",
        "Best night in ages: {ev} {when}.",
    ],
    "dish": [
        "I made {dish} {occasion} {when} and it actually turned out great.",
        "{When_cap} I cooked {dish} {occasion}. Zero leftovers!",
        "Attempted {dish} {occasion} {when}. Kitchen looked like a bomb site but worth it.",
        "cooked {dish} {occasion} {when} and I'm weirdly proud",
    ],
    "book": [
        "I finished reading {book} {when}, couldn't put it down.",
        "Have you read {book}? I stayed up way too late finishing it {when}.",
        "{When_cap} I started {book} and I'm already halfway through.",
        "Just devoured {book}. The ending!!",
    ],
    "race": [
        "I did {race} {when}! {result_cap}.",
        "{When_cap} I ran {race} — {result}.",
        "Finished {race} {when}: {result}. My legs hate me.",
        "So {race} happened {when}. {result_cap}!",
    ],
    "injury": [
        "I {injury} {when} {how}. So dumb.",
        "{When_cap} I {injury} — {how}, of course.",
        "Ugh, I {injury} {how} {when}.",
        "Small disaster: {injury_gerund} {how}, {when}.",
    ],
    "home": [
        "We moved into {home} {when}!",
        "{When_cap} I got the keys to {home}. Boxes everywhere.",
        "Officially living in {home} as of {when}.",
        "moving day was {when}: {home} 🏡",
    ],
    "volunteer": [
        "I've started volunteering at {org}, {task}.",
        "Signed up to help at {org} — I'm {task}.",
        "New thing: volunteering at {org}. Mostly {task}.",
        "I'm giving a few hours a week to {org} now, {task}.",
    ],
    "pet_update": [
        "{pet} figured out how to open the cupboard where the treats are. I'm doomed.",
        "Had to buy {pet} a new bed because {pron_s} destroyed the old one 🙃",
        "{pet} has started waking me up at 6am sharp every single day.",
        "Took {pet} to visit my parents and {pron_s} was an absolute angel, shockingly.",
    ],
    "hobby_update": [
        "Still going with the {hobby}, by the way — twice a week now.",
        "{hobby_cap} update: I'm actually getting better! Even my teacher said so.",
        "Did some {hobby} again this week, it's honestly the best part of my week.",
        "I'm properly hooked on {hobby} now, I even bought my own gear.",
    ],
    "plan": [
        "I've decided I want to {plan}.",
        "Thinking seriously about trying to {plan} next year.",
        "Big goal for next year: {plan}. Hold me to it.",
        "Don't laugh but I really want to {plan}.",
    ],
}
DETAIL_TEMPLATES: dict[str, list[str]] = {
    "job_start": ["Honestly {detail}.", "{detail_cap}, but I'm learning loads.", "So far {detail} 😅"],
    "job_change": [
        "Pay is better too, and {detail}.",
        "I start in a couple of weeks. Apparently {detail}.",
        "I'll miss my old team, but {detail}.",
    ],
    "pet_adopt": [
        "{pron_s_cap}'s so tiny, I keep checking on {pron}.",
        "I've taken about four hundred photos of {pron}.",
        "{pron_s_cap} already has a favourite spot by the window.",
        "The flat is basically {pron_pos} flat now.",
    ],
    "pet_sick": [
        "{pron_s_cap}'s on medication twice a day now.",
        "The vet bill was painful too, ngl.",
        "I barely slept, I kept checking on {pron}.",
    ],
    "hobby": ["{detail_cap}.", "Honestly {detail}.", "{detail_cap} 😂"],
    "trip": ["Also {detail}.", "{detail_cap}!", "And {detail}, honestly."],
    "event": ["Also {detail}.", "{detail_cap}.", "Honestly {detail}."],
    "home": ["{detail_cap}.", "Also {detail}!"],
    "purchase": ["Already used it three times.", "My bank account is crying though.", "No regrets so far!"],
    "injury": [
        "The doctor says no sport for six weeks.",
        "I'm hobbling around like a pirate now.",
        "It's healing, slowly. Very slowly.",
    ],
    "race": ["Training paid off, honestly.", "I could barely walk the next day.", "Already signed up for another one."],
    "dish": ["Everyone asked for seconds.", "I'm definitely making it again.", "Took me about four hours, mind you."],
    "book": ["Already lent it to a colleague.", "I read it in two sittings.", "The twist at the end got me."],
    "volunteer": ["It's only a few hours a week but I love it.", "The other volunteers are so kind."],
    "plan": ["I've already started looking into costs.", "I even made a spreadsheet for it, obviously."],
    "family": ["We're all going to visit next month.", "The family group chat has been nonstop."],
}

# Asked for more, some beats get a second detail.
MORE_PROMPTS = ["And?", "Ooh, go on.", "Tell me more!", "What else?", "Seriously? Then what?", "Haha, and?"]
MORE_DETAIL: dict[str, list[str]] = {
    "job_start": [
        "My manager seems nice, thankfully.",
        "The commute is about forty minutes, which isn't terrible.",
        "I've got a proper desk by a window, luxury.",
    ],
    "job_change": [
        "I negotiated an extra week of holiday too.",
        "I'll be working from home on Fridays.",
        "My last day at the old place is the end of the month.",
    ],
    "pet_adopt": [
        "{pron_s_cap}'s already met the neighbours and charmed everyone.",
        "I bought way too many toys for {pron} already.",
    ],
    "pet_sick": ["The vet wants to see {pron} again in a week.", "I've been sleeping on the sofa next to {pron}."],
    "hobby": [
        "There are about ten of us in the group and everyone's lovely.",
        "I'm going every week now.",
        "It's so good to do something that isn't a screen.",
    ],
    "trip": [
        "The flight back was delayed four hours though.",
        "I took about a thousand photos.",
        "We already want to go back next year.",
    ],
}

# ------------------------------------------------------------------------- generation


@dataclass
class Beat:
    """One thing in a speaker's life, said in one session (and maybe detailed)."""

    kind: str
    owner: int
    slots: dict[str, str]
    phase: int  # -1: any session; 0, 1, 2: the first, middle or last third
    sentiment: str
    row: tuple[Any, ...] = ()
    core: bool = True
    when: tuple[str, str, int] | None = None
    session: int = -1
    turn_id: str = ""
    detail_id: str = ""
    event_date: str = ""


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _article(noun: str) -> str:
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def _resolve(when: tuple[str, str, int], day: date) -> str:
    """The gold answer for a relative phrase said on ``day``."""
    _, kind, arg = when
    shown = f"{day.day} {day:%B %Y}"
    if kind in ("days", "weekday"):
        back = arg if kind == "days" else (day.weekday() - arg) % 7 or 7
        d = day - timedelta(days=back)
        return f"{d.day} {d:%B %Y}"
    if kind == "weekend":
        d = day - timedelta(days=(day.weekday() - 5) % 7 or 7)
        return f"The weekend of {d.day} {d:%B %Y} (the weekend before {shown})"
    if kind == "week":
        return f"The week before {shown}"
    last = day.replace(day=1) - timedelta(days=1)
    return f"{last:%B %Y} (the month before {shown})"


CORE_KINDS = ("job_start", "job_change", "pet_adopt", "pet_sick", "pet_recover", "hobby", "trip", "family")
BEATS_PER_SESSION = 6


class Generator:
    """Builds one split's conversations from its pools, with one seeded Random."""

    def __init__(self, split: str) -> None:
        self.split = split
        self.rng = random.Random(SEEDS[split])

    def pool(self, pool: dict[str, list[Any]]) -> list[Any]:
        return pool[self.split]

    def pick(self, pool: dict[str, list[Any]], used: set[Any]) -> Any:
        value = self.rng.choice([p for p in self.pool(pool) if p not in used])
        used.add(value)
        return value

    def beat(
        self,
        kind: str,
        owner: int,
        phase: int,
        sentiment: str,
        row: tuple[Any, ...] = (),
        *,
        timed: bool = True,
        **slots: str,
    ) -> Beat:
        when = self.rng.choice(WHEN) if timed and self.rng.random() < 0.85 else None
        return Beat(
            kind=kind,
            owner=owner,
            slots=dict(slots),
            phase=phase,
            sentiment=sentiment,
            row=row,
            core=kind in CORE_KINDS,
            when=when,
        )

    # ---- lives

    def life(self, owner: int, used: dict[str, set[Any]]) -> list[Beat]:
        """The beats of one speaker's life, each with a phase (early, middle, late)."""
        job1 = self.pick(JOBS, used["job"])
        job2 = self.pick(JOBS, used["job"])
        beats = [
            self.beat("job_start", owner, 0, "pos", job1, title=job1[0], place=job1[1], detail=job1[2]),
            self.beat(
                "job_change", owner, 2, "pos", job2, title=job2[0], place=job2[1], detail=job2[2], old_place=job1[1]
            ),
        ]
        if self.rng.random() < 0.8:
            beats += self.pet(owner, used)
        for phase in (0, 1):
            h = self.pick(HOBBIES, used["hobby"])
            slots = {"act": h[0], "hobby": h[1], "detail": h[2], "noun": h[3]}
            beats.append(self.beat("hobby", owner, phase, "pos", h, **slots))
            beats.append(self.beat("hobby_update", owner, phase + 1, "fun", h, timed=False, **slots))
        for phase in (0, 2):
            t = self.pick(TRIPS, used["trip"])
            beats.append(self.beat("trip", owner, phase, "fun", t, dest=t[0], did=t[1], detail=t[2]))
        f = self.pick(FAMILY, used["family"])
        beats.append(self.beat("family", owner, -1, f[2], f, rel=f[0], event=f[1]))
        beats += self.minor(owner, used)
        return beats

    def pet(self, owner: int, used: dict[str, set[Any]]) -> list[Beat]:
        pet = self.pick(PETS, used["pet"])
        name, pron = self.pick(PET_NAMES, used["pet_name"])
        ill = self.rng.choice(self.pool(ILLNESSES))
        p = {
            "pet": name,
            "said": pet[1],
            "noun": pet[3],
            "pron": pron,
            "pron_s": "she" if pron == "her" else "he",
            "illness": ill[0],
            "ill_q": ill[1],
        }
        return [
            self.beat("pet_adopt", owner, 0, "pos", pet, **p),
            self.beat("pet_update", owner, 1, "fun", pet, timed=False, **p),
            self.beat("pet_sick", owner, 1, "neg", pet, **p),
            self.beat("pet_recover", owner, 2, "relief", pet, timed=False, **p),
        ]

    def minor(self, owner: int, used: dict[str, set[Any]]) -> list[Beat]:
        beats = []
        for _ in range(2):
            o = self.pick(PURCHASES, used["purchase"])
            beats.append(self.beat("purchase", owner, -1, "fun", o, obj=o[0], why=o[1]))
            ev = self.pick(EVENTS, used["event"])
            beats.append(self.beat("event", owner, -1, "fun", ev, ev=ev[0], detail=ev[1]))
        d = self.pick(DISHES, used["dish"])
        beats.append(self.beat("dish", owner, -1, "fun", d, dish=d[0], occasion=d[1]))
        b = self.pick(BOOKS, used["book"])
        beats.append(self.beat("book", owner, -1, "neu", b, timed=False, book=b[0], noun=b[1]))
        r = self.pick(RACES, used["race"])
        beats.append(
            self.beat("race", owner, -1, "pos", r, race=r[0], result=r[1], race_q="the " + r[0].split(" ", 1)[1])
        )
        i = self.pick(INJURIES, used["injury"])
        beats.append(self.beat("injury", owner, -1, "neg", i, injury=i[0], how=i[1]))
        hm = self.pick(HOMES, used["home"])
        beats.append(self.beat("home", owner, -1, "pos", hm, home=hm[0], detail=hm[1]))
        v = self.pick(VOLUNTEER, used["volunteer"])
        beats.append(self.beat("volunteer", owner, -1, "fun", v, timed=False, org=v[0], task=v[1]))
        pl = self.pick(PLANS, used["plan"])
        beats.append(self.beat("plan", owner, -1, "neu", pl, timed=False, plan=pl[0]))
        return beats

    def schedule(self, beats: list[Beat], n_sessions: int) -> list[Beat]:
        """Give each beat a session: phased beats within their third, the rest where fewest
        are; optional beats beyond what the sessions hold are left out."""
        room = n_sessions * BEATS_PER_SESSION
        optional = [b for b in beats if not b.core]
        self.rng.shuffle(optional)
        keep = [b for b in beats if b.core] + optional[: max(0, room - sum(b.core for b in beats))]
        load = [0] * n_sessions
        ordered = sorted(keep, key=lambda b: (b.phase < 0, self.rng.random()))
        for beat in ordered:
            lo, hi = (
                (0, n_sessions)
                if beat.phase < 0
                else (beat.phase * n_sessions // 3, (beat.phase + 1) * n_sessions // 3)
            )
            least = min(load[lo:hi])
            beat.session = self.rng.choice([s for s in range(lo, hi) if load[s] == least])
            load[beat.session] += 1
        return keep

    # ---- sessions

    def interleave(self, beats: list[Beat]) -> list[Beat]:
        """A session's beats, each speaker's in phase order, the speakers taking turns."""
        own = [sorted((b for b in beats if b.owner == o), key=lambda b: (b.phase, self.rng.random())) for o in (0, 1)]
        first = self.rng.randrange(2)
        out: list[Beat] = []
        while own[0] or own[1]:
            for o in (first, 1 - first):
                if own[o]:
                    out.append(own[o].pop(0))
        return out

    def dates(self, n: int) -> list[datetime]:
        current = datetime(2022, 1, 10, tzinfo=UTC) + timedelta(days=self.rng.randrange(0, 600))
        out = []
        for _ in range(n):
            current = current.replace(hour=self.rng.randrange(8, 22), minute=self.rng.randrange(60))
            out.append(current)
            current += timedelta(days=self.rng.randrange(5, 50))
        return out

    def conversation(self, number: int, names: list[str]) -> dict[str, Any]:
        cid = f"{PREFIX[self.split]}{number:02d}"
        n_sessions = self.rng.randint(10, 14)
        used: dict[str, set[Any]] = defaultdict(set)
        beats = self.schedule(self.life(0, used) + self.life(1, used), n_sessions)
        dates = self.dates(n_sessions)
        sessions = []
        carry: list[Beat] = []
        for s in range(n_sessions):
            todo = carry + self.interleave([b for b in beats if b.session == s])
            session, carry = self.session(cid, s, dates[s], names, todo)
            sessions.append(session)
        said = [b for b in beats if b.turn_id]
        questions = Questions(self, names, said, used).build(cid)
        return {"conversation_id": cid, "speakers": names, "sessions": sessions, "questions": questions}

    def session(
        self, cid: str, s: int, when: datetime, names: list[str], todo: list[Beat]
    ) -> tuple[dict[str, Any], list[Beat]]:
        sid = f"{cid}-s{s + 1:02d}"
        # the one who greets is mostly not the one with the first news: the reply can carry it
        first = todo[0].owner if todo else self.rng.randrange(2)
        talk = Talk(self, sid, when, names, start=1 - first if self.rng.random() < 0.8 else first)
        target = self.rng.randint(12, 22)
        talk.greet()
        pending = list(todo)
        while pending and talk.beat(pending[0], room=22 - 3 - len(talk.turns)):
            pending.pop(0)
            if self.rng.random() < 0.04 and len(talk.turns) + 5 <= target:
                talk.owe()
                talk.filler()
        if len(talk.turns) + 2 < 12:
            talk.owe()
            while len(talk.turns) + 2 < 12:
                talk.filler()
        talk.farewell()
        return {"session_id": sid, "date": when.isoformat(), "turns": talk.turns}, pending


class Talk:
    """The turns of one session, the speakers strictly alternating."""

    def __init__(self, gen: Generator, sid: str, when: datetime, names: list[str], start: int) -> None:
        self.gen = gen
        self.rng = gen.rng
        self.sid = sid
        self.when = when
        self.names = names
        self.next = start
        self.turns: list[dict[str, Any]] = []
        self.owed: str | None = None

    def say(self, text: str, informative: bool) -> str:
        tid = f"{self.sid}-t{len(self.turns) + 1:03d}"
        text = text.replace("{O}", self.names[1 - self.next])
        if not informative and self.rng.random() < 0.12:
            text = text.lower()
        self.turns.append({"turn_id": tid, "speaker": self.names[self.next], "text": text, "informative": informative})
        self.next = 1 - self.next
        return tid

    def greet(self) -> None:
        self.say(self.rng.choice(GREETINGS), False)
        self.owed = self.rng.choice(GREETING_REPLIES).replace("{O}", self.names[1 - self.next])

    def farewell(self) -> None:
        bye = self.rng.choice(FAREWELLS)
        if self.owed is not None and self.rng.random() < 0.7:
            bye = f"{self.owed} {bye}"
            self.owed = None
        self.owe()
        self.say(bye, False)
        self.say(self.rng.choice(FAREWELL_REPLIES), False)

    def filler(self) -> None:
        if self.rng.random() < 0.4:
            self.say(self.rng.choice(self.gen.pool(HYPOTHETICALS)), False)
            self.say(self.rng.choice(HYPO_REPLIES), False)
        else:
            first, second = self.rng.choice(FILLER_PAIRS)
            self.say(first, False)
            self.say(second, False)

    def react(self, beat: Beat, slots: dict[str, str], follow_up: bool) -> str:
        """A friend's reaction to ``beat``, maybe with a question back (small talk)."""
        reaction = self.rng.choice(REACTIONS[beat.sentiment])
        if follow_up:
            topic = beat.kind if beat.kind == "pet_sick" else beat.kind.split("_")[0]
            reaction = f"{reaction} {self.rng.choice(FOLLOW_UPS.get(topic, FOLLOW_UPS['generic']))}"
        return reaction.replace("{pet}", slots.get("pet", "them")).replace("he/she", slots.get("pron_s", "they"))

    def owe(self) -> None:
        """Say the reaction still owed to the last beat, if any."""
        if self.owed is not None:
            self.say(self.owed, False)
            self.owed = None

    def beat(self, beat: Beat, room: int) -> bool:
        """Say ``beat`` in at most ``room`` turns, or nothing (False): the fact (after the
        reaction owed to the last beat, or a prompt), maybe a reaction and a detail. The
        reaction to the beat is left owed."""
        merged = self.owed is not None and self.next == beat.owner and self.rng.random() < 0.92
        owe = self.owed is not None and not merged
        prompt = (self.next != beat.owner) != owe  # after the owed reaction the turn passes
        cost = owe + prompt + 1
        if cost > room:
            return False
        slots = self.slots(beat)
        fact = self.fill(self.rng.choice(FACT_TEMPLATES[beat.kind]), slots)
        if merged:  # the friend reacts and goes straight on to news of their own
            owed = self.owed if self.owed[-1] in ".!?)" or not self.owed[-1].isalnum() else f"{self.owed}!"
            fact = f"{owed} {fact}" if self.rng.random() < 0.75 else fact
            self.owed = None
        self.owe()
        if prompt:
            topic = beat.kind.split("_")[0]
            self.say(self.rng.choice(PROMPTS.get(topic, []) + PROMPTS["generic"]), False)
        beat.turn_id = self.say(fact, True)
        if beat.kind in DETAIL_TEMPLATES and self.rng.random() < 0.85 and cost + 2 <= room:
            self.say(self.react(beat, slots, self.rng.random() < 0.6), False)
            details = self.rng.sample(DETAIL_TEMPLATES[beat.kind], 2)
            beat.detail_id = self.say(self.fill(details[0], slots), True)
            if beat.kind in MORE_DETAIL and self.rng.random() < 0.7 and cost + 4 <= room:
                self.say(self.rng.choice(MORE_PROMPTS), False)
                self.say(self.fill(self.rng.choice(MORE_DETAIL[beat.kind]), slots), True)
        self.owed = self.react(beat, slots, False)
        return True

    def slots(self, beat: Beat) -> dict[str, str]:
        slots = dict(beat.slots)
        if beat.when is not None:
            phrase = beat.when[0]
            beat.event_date = _resolve(beat.when, self.when.date())
        else:
            phrase = self.rng.choice(["recently", "the other day", "a little while ago"])
        slots["when"] = phrase
        slots["When_cap"] = _cap(phrase)
        if "title" in slots:
            slots["a_title"] = _article(slots["title"])
        if "pron" in slots:
            slots["pron_pos"] = "her" if slots["pron"] == "her" else "his"
            slots["pron_s_cap"] = _cap(slots["pron_s"])
        if "injury" in slots:
            verb, _, rest = slots["injury"].partition(" ")
            slots["injury_gerund"] = f"{ {'broke': 'broken', 'got': 'got'}.get(verb, verb) } {rest}"
        for key in ("detail", "why", "result", "hobby"):
            if key in slots:
                slots[f"{key}_cap"] = _cap(slots[key])
        return slots

    @staticmethod
    def fill(template: str, slots: dict[str, str]) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: slots.get(m.group(1), m.group(0)), template)


NONE = "Not mentioned in the conversation"


class Questions:
    """The questions of one conversation, from the beats said in it."""

    def __init__(self, gen: Generator, names: list[str], beats: list[Beat], used: dict[str, set[Any]]) -> None:
        self.gen = gen
        self.rng = gen.rng
        self.names = names
        self.beats = beats
        self.used = used
        self.out: dict[str, list[dict[str, Any]]] = {k: [] for k in TARGETS}

    def of(self, owner: int, kind: str) -> list[Beat]:
        return [b for b in self.beats if b.owner == owner and b.kind == kind]

    def ask(
        self,
        category: str,
        wording: dict[str, list[str]] | str,
        slots: dict[str, str],
        answer: str,
        evidence: list[str],
    ) -> None:
        template = wording if isinstance(wording, str) else self.rng.choice(wording[self.gen.split])
        question = _cap(Talk.fill(template, slots))
        self.out[category].append({"question": question, "answer": answer, "category": category, "evidence": evidence})

    def build(self, cid: str) -> list[dict[str, Any]]:
        for owner, name in enumerate(self.names):
            p = {"P": name}
            self.single(owner, p)
            self.temporal(owner, p)
            self.multi(owner, p)
            self.open_domain(owner, p)
            self.unanswerable(p)
        chosen: list[dict[str, Any]] = []
        spare: list[dict[str, Any]] = []
        for category, target in TARGETS.items():
            pool = self.out[category]
            self.rng.shuffle(pool)
            chosen += pool[:target]
            spare += [q for q in pool[target:] if category in ("single-hop", "temporal")]
        self.rng.shuffle(spare)
        chosen += spare[: max(0, 51 - len(chosen))]
        self.rng.shuffle(chosen)
        return [{"question_id": f"{cid}-q{i:03d}", **q} for i, q in enumerate(chosen, start=1)]

    def single(self, owner: int, p: dict[str, str]) -> None:
        for b in self.of(owner, "job_change"):
            self.ask(
                "single-hop",
                Q_SINGLE["job_now"],
                p,
                f"{_cap(_article(b.slots['title']))} at {b.slots['place']}",
                [b.turn_id],
            )
        for b in self.of(owner, "job_start"):
            self.ask("single-hop", Q_SINGLE["job_before"], p, _cap(b.slots["place"]), [b.turn_id])
        for b in self.of(owner, "pet_adopt"):
            s = {**p, **b.slots}
            self.ask("single-hop", Q_SINGLE["pet_kind"], s, b.row[2], [b.turn_id])
            self.ask("single-hop", Q_SINGLE["pet_name"], s, b.slots["pet"], [b.turn_id])
        for b in self.of(owner, "hobby"):
            self.ask("single-hop", Q_SINGLE["hobby"], {**p, **b.slots}, _cap(b.slots["hobby"]), [b.turn_id])
        for b in self.of(owner, "trip"):
            self.ask("single-hop", Q_SINGLE["trip_what"], {**p, **b.slots}, _cap(b.slots["did"]), [b.turn_id])
        simple = {
            "dish": ("dish", Q_SINGLE["dish"]),
            "book": ("book", Q_SINGLE["book"]),
            "home": ("home", Q_SINGLE["home"]),
            "volunteer": ("org", Q_SINGLE["volunteer"]),
        }
        for kind, (key, wording) in simple.items():
            for b in self.of(owner, kind):
                self.ask("single-hop", wording, {**p, **b.slots}, _cap(b.slots[key]), [b.turn_id])
        for b in self.of(owner, "family"):
            self.ask("single-hop", b.row[3], p, f"{_cap(b.slots['rel'])} ({b.slots['event']})", [b.turn_id])
        for kind, key in (("purchase", "obj"), ("event", "ev"), ("race", "result"), ("injury", "how")):
            for b in self.of(owner, kind):
                self.ask("single-hop", b.row[2], p, _cap(b.slots[key]), [b.turn_id])
        for b in self.of(owner, "plan"):
            self.ask("single-hop", b.row[1], p, b.row[2], [b.turn_id])

    def temporal(self, owner: int, p: dict[str, str]) -> None:
        for b in self.beats:
            if b.owner == owner and b.event_date and b.kind in Q_TEMPORAL:
                self.ask("temporal", Q_TEMPORAL[b.kind], {**p, **b.slots}, b.event_date, [b.turn_id])

    def multi(self, owner: int, p: dict[str, str]) -> None:
        pairs = [
            ("job_start", "job_change", "jobs"),
            ("pet_adopt", "pet_sick", "pet_ill"),
            ("pet_sick", "pet_recover", "pet_outcome"),
        ]
        for first_kind, second_kind, key in pairs:
            for first, second in zip(self.of(owner, first_kind), self.of(owner, second_kind), strict=False):
                s = {**p, **first.slots}
                if key == "jobs":
                    answer = (
                        f"First {_article(first.slots['title'])} at {first.slots['place']}, then "
                        f"{_article(second.slots['title'])} at {second.slots['place']}"
                    )
                elif key == "pet_ill":
                    answer = _cap(s["illness"])
                else:
                    answer = f"{s['pet']} had {s['ill_q']} and made a full recovery"
                self.ask("multi-hop", Q_MULTI[key], s, answer, [first.turn_id, second.turn_id])
        for kind, key, field_ in (("hobby", "hobbies", "hobby"), ("trip", "trips", "dest")):
            both = self.of(owner, kind)
            if len(both) == 2:
                answer = f"{_cap(both[0].slots[field_])} and {both[1].slots[field_]}"
                self.ask("multi-hop", Q_MULTI[key], p, answer, [both[0].turn_id, both[1].turn_id])

    def open_domain(self, owner: int, p: dict[str, str]) -> None:
        for kind, q, a in (("job_change", 3, 4), ("pet_adopt", 4, 5), ("hobby", 4, 5), ("trip", 3, 4)):
            for b in self.of(owner, kind):
                self.ask("open-domain", b.row[q], p, Talk.fill(b.row[a], p), [b.turn_id])

    def unanswerable(self, p: dict[str, str]) -> None:
        species = sorted({r[0] for r in self.gen.pool(PETS)} - {r[0] for r in self.used["pet"]})
        for sp in self.rng.sample(species, min(1, len(species))):
            self.ask("unanswerable", Q_UNANSWERABLE["pet"], {**p, "species": sp}, NONE, [])
        asks = (
            ("hobby", HOBBIES, 1, "hobby"),
            ("trip", TRIPS, 0, "dest"),
            ("family", FAMILY, 0, "rel"),
            ("purchase", PURCHASES, 0, "obj"),
        )
        for used_key, pool, index, slot in asks:
            unused = sorted({r[index] for r in self.gen.pool(pool)} - {r[index] for r in self.used[used_key]})
            if unused:
                self.ask(
                    "unanswerable",
                    Q_UNANSWERABLE[used_key if used_key != "family" else "relative"],
                    {**p, slot: self.rng.choice(unused)},
                    NONE,
                    [],
                )


# ------------------------------------------------------------------------------ checks

_STOP_TEXT = (
    "a an the and or of to in on at for with from by my me i i'd i'm i've is it its it's was we our up out as so be "
    "his her he she they their them this that those these into over off very all about but can did had have how "
    "what which were get got like more one new old two three day time want try take see after back near first "
    "started took came broke joined"
)
_STOP = frozenset(_STOP_TEXT.split())
# The fields of each pool that state the fact (not the detail, question or inference wording).
_CONTENT: list[tuple[dict[str, list[Any]], Callable[[Any], Any]]] = [
    (NAMES, lambda v: v),
    (PET_NAMES, lambda v: v[0]),
    (ILLNESSES, lambda v: v[0]),
    (FAMILY, lambda v: v[:2]),
    (PURCHASES, lambda v: v[0]),
    (EVENTS, lambda v: v[0]),
    (DISHES, lambda v: v[0]),
    (BOOKS, lambda v: v[0]),
    (RACES, lambda v: v[0]),
    (INJURIES, lambda v: v[:2]),
    (HOMES, lambda v: v[0]),
    (VOLUNTEER, lambda v: v[0]),
    (PLANS, lambda v: v[0]),
    (HYPOTHETICALS, lambda v: v),
    (JOBS, lambda v: v[:2]),
    (PETS, lambda v: v[1]),
    (HOBBIES, lambda v: v[:2]),
    (TRIPS, lambda v: v[:2]),
]


def _words(value: Any) -> set[str]:
    if isinstance(value, str):
        return {w for w in re.findall(r"[a-z][a-z'-]+", value.lower()) if w not in _STOP and len(w) > 2}
    return set().union(*(_words(v) for v in value)) if value else set()


def _check_disjoint() -> None:
    """No content word of a test fact value appears in a dev fact value."""
    dev: set[str] = set()
    test: set[str] = set()
    for pool, part in _CONTENT:
        dev |= _words([part(v) for v in pool["dev"]])
        test |= _words([part(v) for v in pool["test"]])
    shared = dev & test
    if shared:
        raise SystemExit(f"dev and test pools share content words: {sorted(shared)}")


def generate(split: str) -> str:
    """The split as JSON lines (the same text for the same script, byte for byte)."""
    _check_disjoint()
    gen = Generator(split)
    names = list(gen.pool(NAMES))
    gen.rng.shuffle(names)
    lines = []
    for n in range(CONVERSATIONS[split]):
        pair = names[2 * n : 2 * n + 2]
        lines.append(json.dumps(gen.conversation(n + 1, pair), ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=sorted(SEEDS), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--check", action="store_true", help="regenerate in memory and compare with --out")
    args = parser.parse_args(argv)
    text = generate(args.split)
    if args.check:
        same = args.out.exists() and args.out.read_text(encoding="utf-8") == text
        print(f"{args.out}: {'identical' if same else 'DIFFERS from the generator'}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}: {CONVERSATIONS[args.split]} conversations")
    return 0


if __name__ == "__main__":
    sys.exit(main())
