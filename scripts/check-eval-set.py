#!/usr/bin/env python3
"""Validate a researchflow evaluation set (JSON Lines) against its corpus.

Usage: scripts/check-eval-set.py [SET.jsonl] [CORPUS_DIR]
Defaults: fixtures/eval/batteries.jsonl and fixtures/corpus, relative to the
repository root (the parent of this script's folder).

Checks, each failure reported and counted:
  - every non-empty line is a JSON object with the keys id, question,
    answers, evidence, of the right types, and optionally trap (true) with
    decoys (the wrong answers the trap tempts);
  - ids match bNN (letter + digits) and are unique;
  - the question is non-empty, ends with '?', and does not copy a run of
    COPY_RUN or more consecutive words from any corpus document;
  - answers are 1 to 3 short strings (1 to 6 words) without duplicates,
    evidence is 1 or more items, each a file name that exists in the corpus
    or a list of such names (alternatives: documents that state the same
    fact), no name twice;
  - every gold answer appears (case-insensitive, whitespace collapsed) in at
    least one of its evidence files, and every evidence file (each
    alternative too) contains at least one of the answers;
  - an unanswerable question has both answers and evidence empty;
  - a trap gives 1 to 3 decoys, none holding a gold answer or held by one
    (as whole words, as eval matches them); an answerable trap has each decoy
    within NEAR characters of a gold answer in one of its evidence files (the
    wrong answer sits next to the right one); an unanswerable trap has each
    decoy in the corpus and at least half of its question's words in one
    corpus document (it shares the corpus's words);
  - the mix: at least MIN_TOTAL questions, MIN_TWO_DOC with two evidence
    files, MIN_UNANSWERABLE unanswerable, and every corpus file is evidence
    for at least one question.
Prints a summary; exits 1 on any problem, 0 otherwise. Standard library only.
"""

import json
import os
import re
import sys
from collections import Counter

KEYS = {"id", "question", "answers", "evidence"}
TRAP_KEYS = {"trap", "decoys"}
ID_RE = re.compile(r"^[a-z][0-9]{2,}$")
MAX_ANSWER_WORDS = 6
MAX_ANSWERS = 3
COPY_RUN = 8
MIN_TOTAL = 32
MIN_TWO_DOC = 6
MIN_UNANSWERABLE = 4
NEAR = 600
MAX_DECOYS = 3
# Words too common to show that a question shares the corpus's words.
COMMON = {"the", "and", "for", "what", "which", "how", "does", "did", "its", "with",
          "that", "this", "from", "many", "much", "are", "was", "when", "who", "whom",
          "under", "into", "may", "must", "can", "have", "has", "you", "your"}


def norm(text):
    """Lower-case and collapse runs of whitespace to one space."""
    return re.sub(r"\s+", " ", text.lower()).strip()


def words(text):
    return re.findall(r"[a-z0-9]+", text.lower())


def whole_words(text):
    """Lower case, letters and digits, one space between, as eval compares answers."""
    return " " + " ".join(re.findall(r"[^\W_]+", text.lower())) + " "


def near(text, a, b, window):
    """True if a and b both occur in text, starts at most window characters apart."""
    starts_a = [m.start() for m in re.finditer(re.escape(a), text)]
    starts_b = [m.start() for m in re.finditer(re.escape(b), text)]
    return any(abs(x - y) <= window for x in starts_a for y in starts_b)


def check_trap(problem, where, question, answers, evidence_files, decoys, corpus_norm):
    """The trap's decoys are real: next to the answer, or in a passage of the corpus."""
    if not isinstance(decoys, list) or not decoys or len(decoys) > MAX_DECOYS or \
            not all(isinstance(d, str) and d.strip() for d in decoys):
        problem(where, "a trap gives 1 to %d decoys, non-empty strings" % MAX_DECOYS)
        return
    for d in decoys:
        for a in answers:
            if whole_words(a) in whole_words(d) or whole_words(d) in whole_words(a):
                problem(where, "decoy %r and answer %r hold one another: eval could not tell them apart" % (d, a))
        if answers:
            if not any(near(corpus_norm[e], norm(a), norm(d), NEAR)
                       for e in evidence_files for a in answers):
                problem(where, "decoy %r is not within %d characters of an answer in its evidence" % (d, NEAR))
        elif not any(norm(d) in text for text in corpus_norm.values()):
            problem(where, "decoy %r is in no corpus document" % d)
    if not answers:
        asked = {w for w in words(question) if len(w) > 2 and w not in COMMON}
        best = max((len(asked & set(words(text))) for text in corpus_norm.values()), default=0)
        if 2 * best < len(asked):
            problem(where, "the question shares only %d of its %d words with any one document" % (best, len(asked)))


def copies_corpus(question_words, corpus_grams):
    """True if COPY_RUN consecutive question words occur together in the corpus."""
    for i in range(len(question_words) - COPY_RUN + 1):
        if tuple(question_words[i:i + COPY_RUN]) in corpus_grams:
            return True
    return False


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    set_path = argv[1] if len(argv) > 1 else os.path.join(root, "fixtures/eval/batteries.jsonl")
    corpus_dir = argv[2] if len(argv) > 2 else os.path.join(root, "fixtures/corpus")

    problems = []

    def problem(where, msg):
        problems.append("%s: %s" % (where, msg))

    if not os.path.isdir(corpus_dir):
        print("corpus folder not found: %s" % corpus_dir)
        return 1
    corpus = {}
    for name in sorted(os.listdir(corpus_dir)):
        path = os.path.join(corpus_dir, name)
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                corpus[name] = f.read()
    corpus_norm = {name: norm(text) for name, text in corpus.items()}

    # n-grams of corpus words, for the copied-sentence check
    grams = set()
    for text in corpus.values():
        w = words(text)
        for i in range(len(w) - COPY_RUN + 1):
            grams.add(tuple(w[i:i + COPY_RUN]))

    try:
        with open(set_path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        print("cannot read %s: %s" % (set_path, e))
        return 1

    items = []
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = "line %d" % lineno
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            problem(where, "invalid JSON (%s)" % e)
            continue
        if not isinstance(obj, dict):
            problem(where, "not a JSON object")
            continue
        keys = set(obj)
        if not KEYS <= keys <= KEYS | TRAP_KEYS:
            missing = sorted(KEYS - keys)
            extra = sorted(keys - KEYS - TRAP_KEYS)
            problem(where, "keys differ (missing %s, extra %s)" % (missing, extra))
            continue
        if ("decoys" in obj or "trap" in obj) and obj.get("trap") is not True:
            problem(where, "`decoys` and `trap` go together, with \"trap\": true")
            continue
        qid, question, answers, evidence = obj["id"], obj["question"], obj["answers"], obj["evidence"]
        if not isinstance(qid, str) or not ID_RE.match(qid):
            problem(where, "bad id %r" % (qid,))
            continue
        where = "%s (line %d)" % (qid, lineno)
        if not isinstance(question, str) or not question.strip():
            problem(where, "question must be a non-empty string")
            continue
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            problem(where, "answers must be a list of strings")
            continue
        def item_ok(e):
            return isinstance(e, str) or (
                isinstance(e, list) and len(e) > 0 and all(isinstance(a, str) for a in e))
        if not isinstance(evidence, list) or not all(item_ok(e) for e in evidence):
            problem(where, "evidence must be a list of file names or of lists of them")
            continue
        items.append((where, qid, question, answers, evidence, obj.get("decoys")))

    ids = Counter(item[1] for item in items)
    for qid, n in sorted(ids.items()):
        if n > 1:
            problem(qid, "id used %d times" % n)

    cited = Counter()
    kinds = Counter()
    for where, qid, question, answers, evidence, decoys in items:
        if decoys is not None:
            kinds["traps"] += 1
        if not question.rstrip().endswith("?"):
            problem(where, "question does not end with '?'")
        if copies_corpus(words(question), grams):
            problem(where, "question copies %d or more consecutive words of the corpus" % COPY_RUN)

        if not answers and not evidence:
            kinds["unanswerable"] += 1
            if decoys is not None:
                check_trap(problem, where, question, answers, [], decoys, corpus_norm)
            continue
        if not answers or not evidence:
            problem(where, "answers and evidence must both be empty (unanswerable) or both non-empty")
            continue

        if len(answers) > MAX_ANSWERS:
            problem(where, "%d answers, at most %d" % (len(answers), MAX_ANSWERS))
        seen = set()
        for a in answers:
            n = len(a.split())
            if n < 1 or n > MAX_ANSWER_WORDS:
                problem(where, "answer %r has %d words (1 to %d)" % (a, n, MAX_ANSWER_WORDS))
            if norm(a) in seen:
                problem(where, "answer %r repeated" % a)
            seen.add(norm(a))

        files = [a for e in evidence for a in ([e] if isinstance(e, str) else e)]
        if len(set(files)) != len(files):
            problem(where, "evidence lists a file twice")
        present = []
        for e in files:
            if os.path.basename(e) != e:
                problem(where, "evidence %r must be a bare file name" % e)
            if e not in corpus:
                problem(where, "evidence file %r not in %s" % (e, corpus_dir))
            else:
                present.append(e)
                cited[e] += 1
        for a in answers:
            na = norm(a)
            if not any(na in corpus_norm[e] for e in present):
                problem(where, "answer %r not found in its evidence %s" % (a, evidence))
        for e in present:
            if not any(norm(a) in corpus_norm[e] for a in answers):
                problem(where, "evidence %r contains none of the answers" % e)
        if decoys is not None:
            check_trap(problem, where, question, answers, present, decoys, corpus_norm)

        if len(evidence) == 1:
            kinds["single-document"] += 1
        elif len(evidence) == 2:
            kinds["two-document"] += 1
        else:
            kinds["multi-document (3+)"] += 1

    total = len(items)
    if total < MIN_TOTAL:
        problem("set", "%d questions, at least %d required" % (total, MIN_TOTAL))
    if kinds["two-document"] < MIN_TWO_DOC:
        problem("set", "%d two-document questions, at least %d required" % (kinds["two-document"], MIN_TWO_DOC))
    if kinds["unanswerable"] < MIN_UNANSWERABLE:
        problem("set", "%d unanswerable questions, at least %d required" % (kinds["unanswerable"], MIN_UNANSWERABLE))
    uncited = sorted(set(corpus) - set(cited))
    for name in uncited:
        problem("set", "corpus file %r is evidence for no question" % name)

    print("eval set: %s" % os.path.relpath(set_path))
    print("corpus:   %s (%d files)" % (os.path.relpath(corpus_dir), len(corpus)))
    print("questions: %d" % total)
    for kind in ("single-document", "two-document", "multi-document (3+)", "unanswerable", "traps"):
        if kinds[kind] or kind not in ("multi-document (3+)", "traps"):
            print("  %-20s %d" % (kind, kinds[kind]))
    print("corpus files cited as evidence: %d of %d" % (len(cited), len(corpus)))
    if cited:
        counts = ", ".join("%s %d" % (name, cited[name]) for name in sorted(cited))
        print("  citations per file: %s" % counts)
    if problems:
        print("PROBLEMS (%d):" % len(problems))
        for p in problems:
            print("  - " + p)
        return 1
    print("OK: no problems")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
