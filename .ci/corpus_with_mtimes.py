#!/usr/bin/env python3
"""Copy pi's conformance corpus to DEST with each session file's mtime set to when pi last wrote it.

pi 1.6.0's `listAll` breaks ties in last activity by file mtime (spec C.21), so the corpus's
expected listings hold the order of the mtimes its files had when pi's writers made them.  A
plain copy (which is how ../shared reaches a machine) gives every file the time it was copied
instead: pi itself then lists tied sessions in another order than its recorded answer.  pi
appends a line when an event happens, so a file it wrote was last modified at the newest
timestamp it holds (its header's, for a copy written without a new turn): that is the mtime
restored here.  Nothing else is changed; the copy is what the checker reads.

Usage: corpus_with_mtimes.py SHARED DEST  (DEST/corpus is the copy; DEST/spec links to SHARED/spec,
which the corpus's samples name as ../spec/samples)
"""

import json
import os
import shutil
import sys
from datetime import datetime


def written_at(path: str) -> float | None:
    newest = None
    with open(path, "rb") as fh:
        for line in fh:
            try:
                v = json.loads(line)
                t = datetime.fromisoformat(v["timestamp"].replace("Z", "+00:00")).timestamp()
            except (ValueError, TypeError, KeyError, AttributeError):
                continue
            newest = t if newest is None or t > newest else newest
    return newest


def main() -> int:
    shared, dest = sys.argv[1:3]
    corpus = os.path.join(dest, "corpus")
    shutil.copytree(os.path.join(shared, "corpus"), corpus)
    os.symlink(os.path.abspath(os.path.join(shared, "spec")), os.path.join(dest, "spec"))
    for top, _, names in os.walk(corpus):
        os.chmod(top, 0o755)
        for n in names:
            p = os.path.join(top, n)
            os.chmod(p, 0o644)
            if n.endswith(".jsonl"):
                t = written_at(p)
                if t is not None:
                    os.utime(p, (t, t))
    return 0


if __name__ == "__main__":
    sys.exit(main())
