"""How many questions ranking the offline engine's own sentences could answer at best
(scripts/bench-answer-ceiling.sh).

For each answerable question of an eval set, the quotable units of the documents the engine's
searches found (its eval run's plan files) are ranked three ways: by the question's words
(the share of its content terms a unit holds, each weighted as the engine weighs it: the
square of its rarity among the units), by meaning (cosine of the unit's and the question's
embeddings), and by both (cosine times the sum of 0.3 and that share). It prints how often a
gold answer is in the first 1, 3 or 5 units of each ranking (as whole words, as `eval` matches
answers), how often in any unit of those documents (reachable), and how often the engine's
reports hold one: the ceiling of extraction without a reader, beside what the engine does.

usage: answer_ceiling.py SET.jsonl EVAL_OUT_DIR UNITS.jsonl UNIT_TERMS QUESTION_TERMS
       UNIT_VECTORS QUESTION_VECTORS
(the terms: one JSON array a line, `answer_units terms`; the vectors: `answer_units embed`)
"""
import json
import math
import os
import re
import sys
from collections import Counter

set_file, out_dir, units_file, unit_terms, question_terms = sys.argv[1:6]
unit_vectors, question_vectors = sys.argv[6:8]
lines = lambda path: [json.loads(line) for line in open(path)]
numbers = lambda path: [[float(x) for x in line.split()] for line in open(path)]
units, questions = lines(units_file), lines(set_file)
unit_terms, asked_terms = [set(t) for t in lines(unit_terms)], lines(question_terms)
vectors, asked = numbers(unit_vectors), numbers(question_vectors)
assert len(vectors) == len(units) == len(unit_terms)
assert len(asked) == len(questions) == len(asked_terms)

# The eval's rule: a gold answer counts when its words stand in the text as whole words.
words = lambda s: " " + " ".join(re.findall(r"[^\W_]+", s.lower())) + " "
unit_words = [words(u["text"]) for u in units]
df = Counter(t for terms in unit_terms for t in terms)
n = len(units)
dot = lambda a, b: sum(x * y for x, y in zip(a, b))

evaluation = json.load(open(os.path.join(out_dir, "eval.json")))
matched = {q["id"]: q["answer_match"] for q in evaluation["questions"]}
hits = Counter()
answerable = 0
for q, v, q_terms in zip(questions, asked, asked_terms):
    if not q["answers"]:
        continue
    answerable += 1
    plan = json.load(open(os.path.join(out_dir, q["id"] + ".json")))
    docs = {
        os.path.basename(s["url"])
        for node in plan["nodes"]
        if node.get("batch", 0) >= 0
        for s in node.get("sources", [])
    }
    found = [i for i, u in enumerate(units) if u["doc"] in docs]
    weight = {t: math.log(1 + n / (df[t] + 1)) ** 2 for t in q_terms if df[t]}
    total = sum(weight.values()) or 1.0
    coverage = lambda i: sum(weight.get(t, 0.0) for t in unit_terms[i]) / total
    cosine = lambda i: dot(vectors[i], v)
    holds = lambda i: any(words(a) in unit_words[i] for a in q["answers"])
    hits["reachable"] += any(holds(i) for i in found)
    hits["engine"] += matched.get(q["id"], False)
    for name, key in [
        ("words", coverage),
        ("meaning", cosine),
        ("both", lambda i: cosine(i) * (0.3 + coverage(i))),
    ]:
        ranked = sorted(found, key=lambda i: -key(i))
        for k in (1, 3, 5):
            hits[(name, k)] += any(holds(i) for i in ranked[:k])

print(f"answerable questions: {answerable}; a gold answer in a unit of the documents found: "
      f"{hits['reachable']}; answered by the engine's reports: {hits['engine']}")
for name in ("words", "meaning", "both"):
    row = ", ".join(f"first {k}: {hits[(name, k)]}" for k in (1, 3, 5))
    print(f"ranked by {name}: {row}")
