"""Print the Debian bookworm mirror of this machine's apt sources (for debootstrap in CI).

Reads /etc/apt/sources.list and /etc/apt/sources.list.d/* (one-line ``deb URL SUITE ...`` and
deb822 ``.sources`` files); the first http(s) URI serving the suite ``bookworm`` wins (not
bookworm-security or -updates, not third-party repositories with another suite); prints
http://deb.debian.org/debian when none does. Used by deploy/ci-docker.sh.
"""

from __future__ import annotations

import glob
import re
import sys
from collections.abc import Iterable

DEFAULT = "http://deb.debian.org/debian"


def mirrors(files: Iterable[tuple[str, str]], suite: str = "bookworm") -> list[str]:
    """Mirrors serving ``suite`` from (path, text) pairs, in order."""
    found: list[str] = []
    for path, text in files:
        if path.endswith(".sources"):
            for para in re.split(r"\n\s*\n", text):
                fields = dict(re.findall(r"^(\w[\w-]*):[ \t]*(.*)$", para, re.M))
                enabled = fields.get("Enabled", "yes").strip().lower() != "no"
                if (enabled and suite in fields.get("Suites", "").split()
                        and "deb" in fields.get("Types", "").split()):
                    found += [u for u in fields.get("URIs", "").split()
                              if u.startswith(("http://", "https://"))]
        else:
            for line in text.splitlines():
                words = re.sub(r"\[[^\]]*\]", " ", line.split("#", 1)[0]).split()
                if (len(words) >= 3 and words[0] == "deb" and words[2] == suite
                        and words[1].startswith(("http://", "https://"))):
                    found.append(words[1])
    return found


def main() -> int:
    files = []
    for path in ["/etc/apt/sources.list", *sorted(glob.glob("/etc/apt/sources.list.d/*"))]:
        try:
            with open(path) as f:
                files.append((path, f.read()))
        except OSError:
            continue
    print((mirrors(files) or [DEFAULT])[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
