"""What a turn asking to forget may not make memory of, whichever extractor read it."""

from __future__ import annotations

from memledger.extraction.protocol import FactCandidate, RelationshipCandidate, TurnExtraction
from memledger.service.forgetting import topics, without_forgotten, words


def _fact(statement: str) -> FactCandidate:
    return FactCandidate(key="editor", statement=statement, category="technical_fact", confidence=0.9)


def _uses(tool: str) -> RelationshipCandidate:
    return RelationshipCandidate(
        source_name="ada", source_type="user", relation="USES", target_name=tool, target_type="tool", confidence=0.9
    )


def test_a_models_candidates_on_a_forgotten_topic_are_dropped() -> None:
    said = "Forget that I use Vim. I use Neovim now."
    found = TurnExtraction(
        facts=(_fact("The user uses Vim."), _fact("The user uses Neovim now.")),
        relationships=(_uses("Vim"), _uses("Neovim")),
    )
    kept = without_forgotten(found, topics(said))
    assert [f.statement for f in kept.facts] == ["The user uses Neovim now."]
    assert [r.target_name for r in kept.relationships] == ["Neovim"]


def test_content_words_ignore_the_asking() -> None:
    assert words("what I said about my birthdays") == {"birthday"}
    assert topics("Please forget everything. Forget it.") == ["everything"]
    assert words("everything") == frozenset()


def test_being_and_having_are_no_content() -> None:
    """ "Forget what I said about being vegetarian." is about "I'm vegetarian.", which lacks "being"."""
    assert [words(t) for t in topics("Forget what I said about being vegetarian.")] == [{"vegetarian"}]
    assert [words(t) for t in topics("Forget what I said about having a dog.")] == [{"dog"}]
