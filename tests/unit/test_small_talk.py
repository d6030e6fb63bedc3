"""Small talk is not memory: thanks, sympathy, greetings, compliments, reactions,
encouragement, questions and wishes state no fact; everyday news still does."""

from __future__ import annotations

import pytest

from memledger.extraction.heuristic import extract_text

SMALL_TALK: tuple[str, ...] = (
    # thanks and appreciation
    "Thanks so much for listening to me ramble tonight.",
    "Thank you, that really made my day.",
    "I really appreciate you checking in on me.",
    "Your advice means the world to me.",
    "Your support means a lot, honestly.",
    "Cheers for the recipe, mate!",
    "That means so much coming from you.",
    "It means a lot that you remembered.",
    "Honestly, your kindness means everything.",
    # sympathy
    "That must have been really hard on you, Priya.",
    "I'm so sorry to hear about your grandmother.",
    "That sounds exhausting, you must be worn out.",
    "Oh no, that must have hurt a lot.",
    "I can only imagine how stressful that week was for you.",
    "Sorry you had to deal with all that.",
    "You must be exhausted after that flight.",
    "I hate that you had to go through that.",
    # greetings and farewells
    "Hey Marco, long time no see!",
    "Good morning! Hope you slept well.",
    "Hi there, how have you been?",
    "Talk to you soon, take care!",
    "See you next weekend!",
    "Happy birthday, I hope it's a good one!",
    # compliments
    "You're such a talented painter.",
    "Your garden looks absolutely stunning.",
    "You always know exactly what to say.",
    "That's a beautiful photo of the lake.",
    "You have a great eye for colour.",
    "I love how you decorated the living room.",
    "That's so sweet of you to say.",
    # reactions and exclamations
    "Wow, that's amazing news!",
    "Haha, that's hilarious.",
    "No way, that's incredible!",
    "Oh wow, I had no idea.",
    "Aww, I love that for you!",
    "Yikes, that sounds scary.",
    "That must be nice.",
    "Lol, same here.",
    # encouragement and good wishes
    "You've got this, I believe in you.",
    "Keep going, you're doing great.",
    "Don't give up on your dream, it's worth it.",
    "You should be really proud of yourself.",
    "Always believe in yourself.",
    "Good luck with the exam tomorrow!",
    "Congrats on the new baby, that's wonderful!",
    "You must be so excited about the trip!",
    # questions to the other person
    "How did the interview go?",
    "Did you end up going to the concert?",
    "What are you cooking this weekend?",
    "You went hiking again, right?",
    "Are you still thinking about moving?",
    # hypotheticals, wishes and counterfactual conditionals
    "If I had the weekend free, I'd finally learn to knit.",
    "I wish I could play the piano like you.",
    "If I were you, I'd take the job.",
    "If only I had started running sooner.",
    "Imagine if we could just teleport to the beach.",
    "I wish I had more time to read.",
    "If I had a garden I would grow my own tomatoes.",
    "If we lived closer, we could have dinner every week.",
    "I wish we had decided to stay another night.",
)

# Everyday news, with the fact categories each yielded before small talk was filtered:
# the filter must take none of them away (it need not add any).
INFORMATIVE: dict[str, tuple[str, ...]] = {
    "My brother just moved to Montreal for work.": (),
    "I live in Porto with my partner.": ("personal_fact",),
    "I'm allergic to shellfish.": ("personal_fact",),
    "I'm vegetarian, so no steak for me.": ("personal_fact",),
    "My daughter's name is Ines.": (),
    "I'm a nurse at the children's hospital.": ("personal_fact",),
    "I have two cats, Pepper and Miso.": ("personal_fact",),
    "My birthday is March 3.": ("personal_fact",),
    "I finished my first half marathon on Sunday.": ("task_update",),
    "I'm originally from Nairobi.": ("personal_fact",),
    "My goal this year is to run a full marathon.": (),
    "I want to learn Portuguese before the trip.": ("preference",),
    "My husband is Daniel.": ("personal_fact",),
    "Daniel is my husband and he's a chef.": ("personal_fact",),
    "I prefer tea over coffee in the mornings.": ("preference",),
    "I hate running in the rain.": ("preference",),
    "My mentor is Grace Okafor.": ("personal_fact",),
    "I just quit Globex to freelance.": ("personal_fact",),
    "I report to Helen Park now.": ("personal_fact",),
    "I decided to sell my old car.": ("decision",),
    "We decided to get married in June.": ("decision",),
    "My sister Leila works at Spotify.": (),
    "I have a daughter who just turned five.": ("personal_fact",),
    "I moved to Denver last spring.": ("personal_fact",),
    "I'm a high school teacher.": ("personal_fact",),
    "I love hiking with my dog on weekends.": ("preference",),
    "My dentist is Dr. Alvarez.": ("personal_fact",),
    "I can't eat gluten.": ("personal_fact",),
    "I don't eat pork.": ("personal_fact",),
    "I work at Lumen Bakery on weekends.": ("personal_fact",),
    "I started working on a quilt for my niece.": ("task_update",),
    "My dog is called Pickle.": ("personal_fact",),
    "I'm planning to run the Berlin marathon next year.": ("goal",),
    "I have a son and he loves dinosaurs.": ("personal_fact",),
    # news that opens with a social act keeps its statement
    "Thanks, I moved to Lisbon last month.": ("personal_fact",),
    "Wow, my sister is Maya Lopez and she just got engaged.": ("personal_fact",),
    "Sorry for the late reply, I'm allergic to cats and was at the doctor.": ("personal_fact",),
}


@pytest.mark.parametrize("text", SMALL_TALK)
def test_small_talk_states_no_fact(text: str) -> None:
    assert extract_text(text, "ada").facts == ()


@pytest.mark.parametrize("text", INFORMATIVE)
def test_everyday_news_keeps_its_facts(text: str) -> None:
    categories = {fact.category for fact in extract_text(text, "ada").facts}
    assert set(INFORMATIVE[text]) <= categories


def test_small_talk_keeps_its_named_entities_but_no_relationships() -> None:
    result = extract_text("Thanks so much, Priya, I really appreciate you and Marco!", "ada")
    assert {e.name for e in result.entities} >= {"Priya"}
    assert result.relationships == ()
    assert result.facts == ()


def test_news_after_a_greeting_keeps_its_relationships() -> None:
    result = extract_text("Hey! My sister Leila works at Spotify.", "ada")
    assert ("Leila", "PART_OF", "Spotify") in {(r.source_name, r.relation, r.target_name) for r in result.relationships}


@pytest.mark.parametrize(
    ("text", "term"),
    [
        ("PR means pull request.", "term: pr"),
        ("DLQ stands for dead-letter queue.", "term: dlq"),
        ("By done we mean merged and deployed.", "term: done"),
        ("We call it Hydra.", "term: hydra"),
        ("In our team 'green' means every check passed.", "term: green"),
        ("k8s is short for Kubernetes.", "term: k8s"),
    ],
)
def test_a_definition_of_a_term_is_terminology(text: str, term: str) -> None:
    facts = extract_text(text, "ada").facts
    assert [(f.category, f.key) for f in facts] == [("terminology", term)]


@pytest.mark.parametrize(
    "text",
    [
        "Your patience means a lot to me.",
        "It means so much that you came.",
        "That just means you care.",
        "My grandmother's ring means everything to me.",
    ],
)
def test_what_something_is_worth_defines_no_term(text: str) -> None:
    assert [f for f in extract_text(text, "ada").facts if f.category == "terminology"] == []


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("All data must be encrypted at rest.", "constraint: encrypted rest"),
        ("We must not deploy on Fridays.", "constraint: deploy fridays"),
        ("This must be done by Friday.", "constraint: done friday"),
        ("It has to be reviewed by two people.", "constraint: reviewed two"),
        ("Never push to main.", "constraint: push main"),
    ],
)
def test_a_rule_is_a_constraint(text: str, key: str) -> None:
    assert ("constraint", key) in {(f.category, f.key) for f in extract_text(text, "ada").facts}


@pytest.mark.parametrize(
    "text",
    [
        "The move must have been exhausting.",
        "That has to be the cutest puppy I've ever seen.",
        "It must be so nice to have a garden.",
        "That can't be easy.",
    ],
)
def test_an_inference_with_must_is_no_constraint(text: str) -> None:
    assert [f for f in extract_text(text, "ada").facts if f.category == "constraint"] == []


def test_no_own_small_talk_sentence_yields_a_fact() -> None:
    with_facts = [text for text in SMALL_TALK if extract_text(text, "ada").facts]
    assert len(SMALL_TALK) >= 40
    assert with_facts == []
