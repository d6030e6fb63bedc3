"""Who a clause's trigger is said of: the names, pronouns and possessives before it, past
appositions ("Tern, our ingestion service, is ..."), joined by "and" or commas, or the
clause before's subject when this one names none. Pure."""

from __future__ import annotations

from typing import Final

from memledger.extraction import gazetteer as gz
from memledger.extraction import lexicon, name_guess
from memledger.extraction.complaints import FAILING
from memledger.extraction.control import opens_complement
from memledger.extraction.owned_subjects import names_people, people_by_ending
from memledger.extraction.patterns import HONORIFICS, NAME_JOINS, ROLE_ADJECTIVES, Mention, Party
from memledger.extraction.roles import role_words
from memledger.extraction.triggers import (
    APPOSITION_LEADS,
    AUXILIARIES,
    BE_FORMS,
    BOUNDARIES,
    DETERMINERS,
    ELLIPTIC,
    HEAD_NOUNS,
    JOB_TITLES,
    POSSESSIVE_USER,
    PREPOSITIONS,
    RELATIVE_LEADS,
    SERVING_PLACES,
    SUBJECT_PRONOUNS,
    THIRD_PERSON,
    Clause,
    Item,
    find_triggers,
    finite_form,
    is_bare,
    is_filler,
    third_person,
)

_AUXILIARIES: Final = AUXILIARIES | {"'s"}
_JOINING: Final = NAME_JOINS | {"or", "then"}
_QUANTIFIERS: Final = frozenset(("all", "both", "each", "also", "finally", "just", "only"))
_THIRD_AUXILIARIES: Final = frozenset(("has", "is", "does", "hasn't", "isn't", "doesn't"))
_NAMED_KINDS: Final = ("tool", "concept", "project", "organization", "person")
_INTENSIFIERS: Final = frozenset(("itself", "himself", "herself", "themselves"))
_HE_OR_SHE: Final = frozenset(("he", "she", "he's", "she's", "hes", "shes", "he'd", "she'd", "he'll", "she'll"))
_IT: Final = frozenset(("it", "it's"))  # "..., and it's written in Kotlin"
_WE: Final = frozenset(("we", "we're", "we've", "we'd", "we'll", "ourselves"))
_EVERY_ONE_OF: Final = frozenset(("all", "both", "each", "two", "three", "four", "five"))  # "... of us": every one
_TIME_LEADS: Final = frozenset(("since", "after", "before", "when", "while", "once"))
_GOING_ON: Final = frozenset(("and", "but", "so", "which", "then", "though", "because", "sadly"))
_PARTITIVE: Final = frozenset(("half", "most", "some", "many", "few", "none", "one", "two", "three", "rest"))
_CLAUSE_JOINS: Final = frozenset(("and", "but"))
# Verbs of being and having after "and me" as a subject ("N and me are both on P"); a
# trigger verb there does as well ("N and me both work on P").
_SAID_OF_A_GROUP: Final = (["are"], ["were"], ["r"], ["have"])
_CLOSED: Final = PREPOSITIONS | BOUNDARIES | SUBJECT_PRONOUNS | THIRD_PERSON | AUXILIARIES | BE_FORMS
_NOT_IN_PHRASE: Final = PREPOSITIONS | BOUNDARIES | SUBJECT_PRONOUNS | THIRD_PERSON | _JOINING  # a subject's words


def _naming_word(item: Item) -> bool:
    """A word that may open a noun phrase before the name it heads ("the", "our app")."""
    if not isinstance(item, str):
        return False
    return item in DETERMINERS or item in POSSESSIVE_USER or (item.isalpha() and item in HEAD_NOUNS)


def after_bracket(clause: Clause) -> bool:
    """Whether a clause goes on right after a bracket closes ("X (our app) depends on Y"),
    not after a comma that follows it."""
    return clause.lead == ")" and clause.items[:1] != [","]


class ClauseSubjects:
    """The subjects of one clause's triggers; ``possessive`` is set once a "my"/"our"
    made the speaker a subject ("our app is ...")."""

    def __init__(
        self, speaker: Party, clause: Clause, inherited: list[Party], earlier: list[Mention], *, theirs: bool = False
    ) -> None:
        self.speaker = speaker
        self.items = clause.items
        self.words = clause.words
        # "Kestrel, which runs on X": said of what it follows, the speaker's only when that is theirs
        # after a bracket ("X (our app) depends on Y") the name before it is the subject
        self.relative = (clause.lead in RELATIVE_LEADS and theirs) or after_bracket(clause)
        self.inherited = inherited
        self.earlier = earlier
        self.possessive = False
        self.lead = clause.lead
        self.defaulted = False  # the last subject found is the speaker only by a note's bare verb

    def find(self, position: int, *, first: bool, objects_from: int) -> list[Party]:
        """The parties the trigger at item ``position`` is said of; the clause before's
        subject when this one names none (``inherited``), the speaker for a note's bare verb."""
        self.defaulted = False
        if self._where_clause_ends(position):
            return []  # "The hotel where I stay use X": the hotel's, not the speaker's
        described = self._described_before(position)
        if described is not None:  # "Harbourline, the billing tool Ayelet and I maintain, relies on"
            return [Party.of(described)] if isinstance(described, Mention) else []
        group: list[Party] = []
        weak: list[Party] = []
        taken: set[int] = set()  # the items read as subjects: a name after "and" joins only these
        blocked = False
        items = self.items
        last_comma = max((i for i in range(position) if items[i] == ","), default=-1)
        for index, item in enumerate(items[:position]):
            before = items[index - 1] if index else ""
            party = None if self._reduced_relative(index, position) else self._subject_at(index, item, before)
            if party is not None and index >= objects_from and isinstance(item, Mention):
                reaches = all(i in _INTENSIFIERS for i in items[index + 1 : position])  # "X itself depends on"
                fresh = reaches and before in (",", "and", "but")
                fresh = fresh or self._apposed_before(index, position)  # "the firm we work with, Swiftbarrow, uses"
                party = party if fresh else None
            if party is None:
                if group and self._someone_else(index, position, last_comma, taken):
                    group, blocked = [], True
                reported = item in _REPORTING and index + 1 < len(items) and items[index + 1] in DETERMINERS
                if group and reported:
                    group, blocked = [], True  # "Lerato says the checkout service depends on X": the service's
                if not group and isinstance(item, str | Mention) and self._blocks(index, item):
                    blocked = True
                if isinstance(item, Mention) and index < objects_from and self._owner_after(index, item):
                    weak = [Party.of(item)]
                continue
            if item in _WE and group and self._dislocated(index):
                group = [*group, self.speaker]  # "Baraka and me, we work on P": both of them
                continue
            taken.add(index)
            joined = before in (",", "and", "&") and index >= 2
            joined = joined and (index - 2 in taken or self._after_apposition(index - 2))
            joined = joined or self._role_joined(index, taken)
            if joined and before == "," and len(group) == 1 and self._closes_apposition(index + 1):
                joined = False  # "Our HOA, Willow Bend Association, decided": one party named twice
            mixed = isinstance(item, Mention) and group and group[-1].kind not in (party.kind, "user")
            if joined and before == "," and mixed:
                joined = False  # "I'm on Tansy with Ewa and Dumisani, Tansy depends on X": a new subject
            group = [*group, party] if joined and group else [party]
        return group or weak or ([] if blocked else self._unnamed(position, first=first))

    def _owner_after(self, index: int, item: Mention) -> bool:
        """Whether the name at ``index`` owns what the noun before it names ("the team at X",
        "the search page of X", "the checkout flow in X": a product's part; not "people in
        X", where X is a place)."""
        before = self.items[index - 1] if index else ""
        if before in ("at", "of"):
            return True
        if before != "in" or item.entity_type != "project":
            return False
        noun = self.items[index - 2] if index >= 2 else ""
        thing = isinstance(noun, str) and noun.isalpha() and not names_people(noun)
        return thing and not name_guess.is_place(item.name.lower(), "in")

    def _dislocated(self, index: int) -> bool:
        """Whether "we" at ``index`` takes up a subject set before it with the speaker:
        "Baraka and me, we ...", "my colleague Baraka and me we ..."."""
        before = [str(item) for item in self.items[max(0, index - 3) : index]]
        return before[-2:] in (["and", "me"], ["and", "i"]) or before in (["and", "me", ","], ["and", "i", ","])

    def _unnamed(self, position: int, *, first: bool) -> list[Party]:
        """The subject of a trigger no item before it names: the clause before's, or the
        speaker for a note's bare verb."""
        if self.inherited:
            return self.inherited
        if self.lead in _TIME_LEADS and not self._main_clause_ours(position):
            return []  # "Since upgrading to X, the Ferncastle search fails": the search's doing
        lead = [item for item in self.items[:position] if isinstance(item, str)]
        if ":" in lead[:4]:
            lead = lead[lead.index(":") + 1 :]  # "- maps: using X": a note's label says whose nothing
        verb = self.items[position]
        following = self.items[position + 1] if position + 1 < len(self.items) else ""
        noun = following in BE_FORMS or following in AUXILIARIES  # "Builds are run by X": a plural noun
        if isinstance(verb, str) and not (lead or self.lead or noun) and third_person(verb):
            return []  # "Q3 accountant = Folasade. Prefers Xero over Sage.": her preference, not the speaker's
        self.defaulted = first and not self.relative and all(w in ELLIPTIC for w in lead)
        return [self.speaker] if self.defaulted else []

    def _main_clause_ours(self, position: int) -> bool:
        """Whether the clause after a participle's comma ("after upgrading to X, our proxy
        ...") is the speaker's, whose doing the participle then is."""
        words = self.words
        if not words[position].endswith("ing"):
            return True  # "since I moved to X" names its subject
        comma = next((k for k in range(position, len(words)) if words[k] == ","), None)
        if comma is None or comma + 1 >= len(words):
            return True  # no comma: nothing else to ask; the clause ends at it: "and", "which" comes next
        following = words[comma + 1]
        # "We tested it before migrating to X, but ...": the participle is the clause before's
        return following in POSSESSIVE_USER or following in SUBJECT_PRONOUNS or following in _GOING_ON

    def _subject_at(self, index: int, item: Item, before: Item) -> Party | None:
        if isinstance(item, Mention):
            governed = before == "the" and index >= 2 and self.items[index - 2] in PREPOSITIONS  # "on the X team"
            if before in PREPOSITIONS or governed or before in ("i'm", "im", "'s", "called", "named"):
                return None
            if item.entity_type == "tool" and before in POSSESSIVE_USER and self._failing_after(index):
                return self.speaker  # "My Eufy scale stopped syncing with X": the speaker's use of X, through it
            return None if self._modifies(index) else Party.of(item)
        if item in SUBJECT_PRONOUNS or (item == "me" and self._me_in_subject(index, before)) or self._all_of_us(index):
            return self.speaker  # "me n Ousmane are on the receiving team", "Bongani and me are ..."
        if item in _HE_OR_SHE and (person := self.antecedent(index, ("person",))) is not None:
            return Party.of(person)  # "My trainer Bolat he prefers ...", "..., and she prefers ..."
        if item in _IT and len(self.inherited) == 1 and self.inherited[0].kind in ("project", "organization"):
            return self.inherited[0]  # "...; it depends on Meltano": the clause before's subject
        if item in _IT and (last := self.antecedent(index, _NAMED_KINDS)) is not None:
            return Party.of(last) if last.entity_type in ("project", "organization") else None  # the last named
        if item in POSSESSIVE_USER and (before in _PARTITIVE or before == "of") and self._group_follows(index):
            return None  # "half my lab writes ...", "most of our team uses ...": some of them, not the speaker
        if item in POSSESSIVE_USER and before not in PREPOSITIONS and not self._role_follows(index):
            if self._object_of_verb(index):
                return None  # "Rangitane supervises my thesis and works at ...": "my" is in the object
            if before == "," and self._names_before_comma(index):
                return None  # "Tern, our ingestion service, is ...": the apposition is Tern's
            self.possessive = True
            return self.speaker
        if item == "team" and before == "whole":
            return self.speaker
        return None

    def _failing_after(self, index: int) -> bool:
        """Whether a fault follows the thing at ``index``, past a noun or two ("watch stopped")."""
        after = [str(i) for i in self.items[index + 1 : index + 4]]
        k = next((k for k, w in enumerate(after) if not (w.isalpha() and w.islower()) or w in FAILING), 0)
        return after[k : k + 1] != [] and after[k] in FAILING

    def _group_follows(self, index: int) -> bool:
        """Whether the possessive at ``index`` owns a group of people ("my lab", "our
        nurses", "my friends"), not the speaker's things ("half our servers", "half my
        day") or time."""
        following = self.words[index + 1] if index + 1 < len(self.words) else ""
        group = names_people(following) or following in gz.ORG_SUFFIXES
        return group and "me" not in self.words  # not "Half my lab, including me, writes ..."

    def _where_clause_ends(self, position: int) -> bool:
        """Whether a "where" clause ends right before the trigger, which is then the verb of
        the noun "where" followed ("The hotel where I stay use X"): a pronoun, its verb,
        and the trigger with nothing between."""
        items = self.items
        if self.lead != "where" or position != 2 or items[0] not in SUBJECT_PRONOUNS:
            return False
        verb = items[1]
        return isinstance(verb, str) and verb.isalpha() and verb not in _AUXILIARIES and verb not in BE_FORMS

    def _someone_else(self, index: int, position: int, last_comma: int, taken: set[int]) -> bool:
        """Whether the item at ``index`` opens a subject other than the group's before it:
        "where I work, the nurses write ...", "... and my dad uses", "... in Meona and the
        doctors are using X"; not "X, the DBA, ...", nor "Our app is built with X, and the
        API is Y" or "We use X and the CI runs on Y", where "the" goes on with what is
        ours (unless it names people)."""
        item, before = self.items[index], self.items[index - 1] if index else ""
        new_subject = last_comma < index and self.words[position] not in ("at", "on")
        complement = before == "," or opens_complement(self.words, index)  # "I'm sure our accountant uses X"
        determined = complement and item in DETERMINERS
        after_verb = complement or (before == "and" and index >= 2 and not self._is_party(index - 2))
        role = after_verb and item in POSSESSIVE_USER and self._role_follows(index) and not self._apposed(index)
        if (determined or role) and new_subject:
            return True
        ours = self.possessive or any(self.items[k] in _WE for k in taken)
        if ours and not self._others_until(index, position):
            return False
        return self.noun_subject(index, position, max(taken))

    def _others_until(self, index: int, position: int) -> bool:
        """Whether the noun phrase from ``index`` up to the trigger names people ("the
        other teams", "the security folks") or a party by name: not the speaker's things."""
        phrase = self.items[index:position]
        if any(isinstance(w, Mention) for w in phrase):
            return True  # "the support team", "the Hummingbird app": a party of its own
        return any(isinstance(w, str) and w.isalpha() and names_people(w) for w in phrase)

    def noun_subject(self, index: int, position: int, last_subject: int) -> bool:
        """Whether a noun phrase opened by a determiner at ``index`` after "and"/"but" is the
        subject of a new clause ending at the trigger: "we document in X and the doctors
        are using Y", "and all the exams there are on Y", once a verb followed the subjects
        before (not "my team and the designers use Y")."""
        items = self.items
        lead = index - 1 if items[index - 1] in ("all", "both", "most") else index
        if items[index] not in DETERMINERS or lead < 1 or items[lead - 1] not in _CLAUSE_JOINS:
            return False
        k = position
        while k > index + 1 and (items[k - 1] in BE_FORMS or items[k - 1] in _AUXILIARIES or items[k - 1] == "been"):
            k -= 1  # "are using", "has been"
        phrase = items[index + 1 : k]
        if not phrase or len(phrase) > 5:
            return False
        if any(isinstance(w, str) and (not w.isalpha() or w in _NOT_IN_PHRASE) for w in phrase):
            return False
        return any(  # a verb after the subjects before: "I study X at Y, and ..."
            items[j - 1] in SUBJECT_PRONOUNS or self._verb_at(j) or finite_form(self.words[j])
            for j in range(last_subject + 1, lead - 1)
        )

    def _object_of_verb(self, index: int) -> bool:
        """Whether the possessive at ``index`` follows a subject and its finite verb, and so
        opens the verb's object ("Ana reviews our code", "she coaches my son")."""
        if index < 2:
            return False
        subject, verb = self.items[index - 2], self.items[index - 1]
        named = isinstance(subject, Mention) or subject in THIRD_PERSON or subject in SUBJECT_PRONOUNS
        finite = isinstance(verb, str) and finite_form(verb) and verb not in _AUXILIARIES and verb not in BE_FORMS
        return named and finite and not self._verb_after_noun(index + 1)

    def _verb_after_noun(self, j: int) -> bool:
        """Whether the noun phrase from ``j`` has a verb of its own after it: "Ana convinced
        my team to use X", "Ben heard our school uses X" make it the subject after all."""
        end = min(j + 3, len(self.items))
        while j < end and isinstance(self.items[j], str) and str(self.items[j]).isalpha() and not self._verb_at(j):
            if self.items[j] in _JOINING or self.items[j] in BOUNDARIES:
                return False  # "supervises my thesis and works at ...": the next verb is the subject's
            j += 1
        return j < len(self.items) and (self.items[j] == "to" or self._verb_at(j))

    def _reduced_relative(self, index: int, position: int) -> bool:
        """Whether the pronoun at ``index`` opens a relative clause without "that" ("the
        contractor we hired uses X"): "the <noun> we <verb>" before the trigger."""
        items = self.items
        if items[index] not in SUBJECT_PRONOUNS or index < 2:
            return False
        verb = items[index + 1]
        if verb in BE_FORMS or verb in _AUXILIARIES or verb == "would":
            return False
        if position - index == 2 or self._apposed_before(position - 2, position):
            return self._headed(index)  # "the firm we work with, Swiftbarrow, uses": the name after it
        if position == index + 1 or any(w in PREPOSITIONS for w in items[max(0, index - 4) : index]):
            return False  # "In my work I uses SAP": the pronoun's verb is the trigger; "At the hospital we ..."
        if self._second_verb(index, position):
            return True
        # "The little café I run with my partner depends on X": "I" cannot be what "depends"
        # agrees with, so the noun before it heads the subject
        agrees = self.words[position]
        third = agrees.endswith("s") and not agrees.endswith("ss") and finite_form(agrees)
        third = third or items[position - 1] in _THIRD_AUXILIARIES  # "the gym I go to has switched"
        noun_phrase = [items[k] for k in range(max(0, index - 4), index)]  # "the Wayfinder orienteering app we"
        opened = any(w in DETERMINERS or w in POSSESSIVE_USER for w in noun_phrase)
        return third and opened and all(isinstance(w, str) and w.isalpha() for w in noun_phrase[-2:])

    def _headed(self, index: int) -> bool:
        """Whether a determiner opens a noun phrase that ends right before the pronoun at
        ``index``: "the firm we ...", "The Marigold recipe site I'm building ...", "the
        kitchen scale I bought ..."; not a subject and its verb ("The policy says we ...")."""
        noun = self.items[index - 1]
        if self.items[index - 2] in DETERMINERS:
            return isinstance(noun, Mention) or noun.isalpha()  # "the firm we", "the Harbor CLI we"
        for j in range(index - 3, max(-1, index - 5), -1):
            if self.items[j] in DETERMINERS:
                between = self.items[j + 1 : index]
                words = [w for w in between if isinstance(w, str)]
                if not all(w.replace("-", "").isalpha() and w not in _CLOSED for w in words):
                    return False  # "the Thimble custom-order tool we built": hyphens join words
                named = len(words) < len(between)  # the last word may be a plural head: "the X app's users"
                return not any(finite_form(w) for w in (words[:-1] if named else words))
        return False

    def _second_verb(self, index: int, position: int) -> bool:
        """Whether the pronoun at ``index`` is the subject of a clause inside a noun phrase:
        "Most teams I talk to have moved to X" has two verbs and nothing joining them, so
        "I talk to" tells which teams."""
        items = self.items
        noun, own = items[index - 1], items[index + 1]
        if not isinstance(noun, str) or not noun.isalpha() or is_filler(noun):
            return False
        if noun in PREPOSITIONS or noun in BOUNDARIES or noun in _JOINING or noun in _AUXILIARIES or noun in BE_FORMS:
            return False
        if not isinstance(own, str) or is_filler(own) or own in _QUANTIFIERS:
            return False  # "we all have switched": one subject
        between = items[index + 2 : position]
        if between and between[-1] in PREPOSITIONS and self.words[position] not in PREPOSITIONS:
            between = between[:-1]  # "the clinic I go to moved ...": a preposition left at its verb
        elif not between or not (between[-1] in _AUXILIARIES or between[-1] in BE_FORMS):
            return False
        return not any(isinstance(w, Mention) or w in BOUNDARIES or w in _JOINING for w in between[:-1])

    def _described_before(self, position: int) -> Mention | str | None:
        """What the trigger at ``position`` is said of when an apposition to a name closes
        right before it: the name, when it opens the clause ("Harbourline, the billing tool
        Ayelet and I maintain, relies on X"), else no one ("" for "Every payment at X, the
        place I run, goes through Y"); never the apposition's own subject. None when no
        such apposition precedes the trigger."""
        items = self.items
        if position < 5 or items[position - 1] != ",":
            return None
        opening = next((k for k in range(position - 2, 0, -1) if items[k] == ","), None)
        if opening is None or not isinstance(items[opening - 1], Mention) or items[opening + 1] not in APPOSITION_LEADS:
            return None
        phrase = items[opening + 1 : position - 1]
        if not all(isinstance(i, Mention) or (i.isalpha() or i in _AUXILIARIES) for i in phrase):
            return None
        if not any(i in SUBJECT_PRONOUNS for i in phrase):
            return None  # "Our guild, the Paved Road crew, decided": no clause of its own; named twice
        if all(_naming_word(i) for i in items[: opening - 1]):
            return items[opening - 1]  # "(Our app) Pylon, the thing I maintain, depends on"
        return ""  # "Every payment at X, the little place I run, goes through Y": the payment's

    def _apposed_before(self, index: int, position: int) -> bool:
        """Whether the name at ``index`` stands between commas right before the trigger at
        ``position``: an apposition naming the subject."""
        items = self.items
        if index != position - 2 or index < 1 or not isinstance(items[index], Mention):
            return False
        return items[index - 1] == "," and items[position - 1] == ","

    def _names_before_comma(self, index: int) -> bool:
        """Whether the possessive at item ``index`` opens an apposition to the name before
        its comma, closed by a comma of its own ("Tern, our ingestion service, is ..."; not
        "Hi Ana, our team moved ...", "For Kestrel, our team ...")."""
        named = index >= 2 and isinstance(self.items[index - 2], Mention)
        headed = index >= 3 and isinstance(self.items[index - 3], Mention) and str(self.items[index - 2]).isalpha()
        named = named or headed  # "The Hollowmere renovation, our loft conversion, depends on ..."
        closed = "," in self.items[index + 1 : index + 7]
        return named and closed and (index < 3 or self.items[index - 3] not in PREPOSITIONS)

    def antecedent(self, index: int, kinds: tuple[str, ...]) -> Mention | None:
        """The last name of one of ``kinds`` before item ``index``, in this clause or before."""
        named = [*self.earlier, *(i for i in self.items[:index] if isinstance(i, Mention))]
        return next((m for m in reversed(named) if m.entity_type in kinds), None)

    def _modifies(self, index: int) -> bool:
        """ "the iOS app uses ...": the tool names the app; the app is the subject. "Amaru's
        stepdad uses ...": the person owns the relative, who is."""
        after = self.items[index + 1] if index + 1 < len(self.items) else ""
        item = self.items[index]
        owned = self.items[index + 2] if after == "'s" and index + 2 < len(self.items) else ""
        if isinstance(owned, str) and owned.isalpha() and names_people(owned):
            return True
        return (
            isinstance(item, Mention) and item.entity_type == "tool" and isinstance(after, str) and after in HEAD_NOUNS
        )

    def _role_follows(self, index: int) -> bool:
        j = index + 1
        while j < len(self.words) and self.words[j] in ROLE_ADJECTIVES:
            j += 1
        role, _ = role_words(self.words, j + 1)
        word = self.words[j] if j < len(self.words) else ""
        nouns = (word, word[:-1]) if word.endswith("s") else (word,)  # "my neighbours use X"
        listed = any(n in gz.ROLES or n in JOB_TITLES or n in HONORIFICS for n in nouns) or role is not None
        following = self.words[j + 1] if j + 1 < len(self.words) else ""
        listed = listed or (people_by_ending(word) and following != "'s")  # "our handyman works for X"
        listed = listed or following in JOB_TITLES  # "my photography teacher prefers X"
        served = self.words[index] == "my" and word in SERVING_PLACES and self._verb_after(j + 1)  # "my uni uses X"
        return listed or served or self._names_a_person(index + 1)

    def _verb_after(self, k: int) -> bool:
        """Whether a verb follows the noun before ``k`` ("my uni uses ...", "my school has
        switched", "my bank's app"), past adverbs; not a noun it modifies ("my school
        laptop runs ...")."""
        while k < len(self.words) and is_filler(self.words[k]):
            k += 1
        word = self.words[k] if k < len(self.words) else ""
        plural = word.endswith("s") and word not in _AUXILIARIES and word not in BE_FORMS
        if plural and k + 1 < len(self.words) and self._verb_at(k + 1):
            return False  # "my uni notes live in X": a plural noun heads the subject
        return finite_form(word) or self._verb_at(k)

    def _verb_at(self, k: int) -> bool:
        """Whether the word at ``k`` is a verb: a form of "be", an auxiliary, or a trigger's
        first word ("my uni use Moodle")."""
        word = self.words[k]
        if word in BE_FORMS or word in _AUXILIARIES:
            return True
        return any(t.start == 0 and not is_bare(t) for t in find_triggers(self.words[k : k + 3]))

    def _names_a_person(self, j: int) -> bool:
        """Whether the noun phrase from item ``j`` is named right after it: "our head chef,
        Ines Varga, prefers ..." is said of Ines Varga, "Our podcast, Night Ferry, is
        recorded in ..." of Night Ferry."""
        end = min(j + 3, len(self.items))
        while j < end and isinstance(self.items[j], str) and str(self.items[j]).isalpha():
            j += 1
        opening = self.items[j] if j < len(self.items) else ""
        apposed = opening in (",", "(")  # "Our podcast, Night Ferry, ...", "our club (Pebblemouth CC) uses"
        j += apposed + (apposed and self.items[j + 1 : j + 2] == ["the"])
        named = self.items[j] if j < len(self.items) else None
        if not isinstance(named, Mention):
            return False
        closing = "," if opening == "," else ")"
        closed = apposed and named.end < len(self.words) and self.items[j + 1 : j + 2] == [closing]
        return (named.entity_type == "person" and named.role is not None) or closed

    def _blocks(self, index: int, item: Item) -> bool:
        if isinstance(item, Mention):
            return self._modifies(index)
        return item in THIRD_PERSON or item in DETERMINERS or (item in POSSESSIVE_USER and self._role_follows(index))

    def _role_joined(self, index: int, taken: set[int]) -> bool:
        """Whether the name at ``index`` follows "and my <role>" after a subject ("me n my
        lab partner Ravi are ..."): one more of the group, named by their role first."""
        k = index - 1
        while k > 0 and index - k <= 3 and isinstance(item := self.items[k], str) and item.isalpha():
            if item in POSSESSIVE_USER:
                role = role_words(self.words, index - 1)[0]
                return self.items[k - 1] in ("and", "&") and k - 2 in taken and role is not None
            k -= 1
        return False

    def _all_of_us(self, index: int) -> bool:
        """Whether "us" at ``index`` ends "all of us", "both of us" or "the two of us": a
        group with the speaker in it. "both" and "all" are read as fillers and dropped, so
        "of us" opening the items had one of them before it."""
        if self.items[index] != "us" or index < 1 or self.items[index - 1] != "of":
            return False
        return index == 1 or self.items[index - 2] in _EVERY_ONE_OF

    def _me_in_subject(self, index: int, before: Item) -> bool:
        """Whether "me" at ``index`` is one of a subject group: first before "and" ("me n
        Ousmane are ...") or last before its verb ("Bongani and me are both on P")."""
        following = self.items[index + 1 : index + 2]
        if following == ["and"] and not before:
            return True
        k = index - 1
        while k >= 0 and (isinstance(self.items[k], Mention) or self.items[k] in (",", "and", "&")):
            k -= 1
        governed = k >= 0 and self.items[k] in PREPOSITIONS  # "the photos of Kofi and me are ..."
        after = [str(item) for item in self.items[index + 1 : index + 3]]
        verb = following in _SAID_OF_A_GROUP or any(t.start == 0 for t in find_triggers(after))
        return before == "and" and verb and not governed  # "Mei and me (both) use X"

    def _after_apposition(self, comma: int) -> bool:
        """Whether ``comma`` closes an apposition that follows a party: "Amaru, our SRE,
        and Eleni ... both work on ..." lists Amaru and Eleni."""
        items = self.items
        if items[comma] != ",":
            return False
        k = comma - 1
        while k > 0 and comma - k <= 5 and isinstance(items[k], str) and items[k] != ",":
            k -= 1
        opening = items[k + 1] if k + 1 < comma else ""
        return items[k] == "," and k >= 1 and self._is_party(k - 1) and opening in DETERMINERS | POSSESSIVE_USER

    def _closes_apposition(self, comma: int) -> bool:
        """Whether the comma at ``comma`` closes an apposition rather than going on with a
        list ("Ana, Bo, and Cy" goes on)."""
        after = self.items[comma + 1] if comma + 1 < len(self.items) else ""
        return self.items[comma : comma + 1] == [","] and after not in ("and", "&") and not isinstance(after, Mention)

    def _apposed(self, index: int) -> bool:
        """ "Xiaoling, our tech lead, is ...": the role from ``index`` closed by a comma."""
        j = index + 1
        while (
            j < len(self.items) and j - index <= 3 and isinstance(self.items[j], str) and str(self.items[j]).isalpha()
        ):
            j += 1
        return self.items[j : j + 1] == [","]

    def _is_party(self, index: int) -> bool:
        item = self.items[index]
        return isinstance(item, Mention) or item in SUBJECT_PRONOUNS or (item == "me" and index == 0)


# Verbs reporting what someone says: the clause after them has a subject of its own.
_REPORTING: Final = frozenset(lexicon.sections("frame_words.txt")["REPORTING"])
