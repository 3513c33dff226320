#!/usr/bin/python3
"""Check that the project's reStructuredText documents parse (TAP).

QEMU's documentation is built by Sphinx; docutils alone does not know
Sphinx's roles and directives, so the few the documents use are registered
here as plain pass-through ones.  Any parser warning or error fails the
document.
"""

import glob
import io
import os
import sys

import docutils.core
from docutils import nodes
from docutils.parsers.rst import Directive, directives, roles

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPHINX_ROLES = ["doc", "ref", "option", "term", "kbd", "file", "samp"]
SPHINX_DIRECTIVES = ["toctree", "code-block", "highlight", "option",
                     "versionadded", "note", "warning", "seealso"]


def generic_role(name, rawtext, text, lineno, inliner, options=None,
                 content=None):
    return [nodes.literal(rawtext, text)], []


class Passthrough(Directive):
    has_content = True
    optional_arguments = 10
    final_argument_whitespace = True
    option_spec = None

    def run(self):
        return [nodes.literal_block("\n".join(self.content),
                                    "\n".join(self.content))]


def check(path):
    err = io.StringIO()
    with open(path) as f:
        docutils.core.publish_doctree(
            f.read(), source_path=path,
            settings_overrides={"report_level": 2, "halt_level": 5,
                                "warning_stream": err})
    return err.getvalue()


def main():
    for r in SPHINX_ROLES:
        roles.register_local_role(r, generic_role)
    for d in SPHINX_DIRECTIVES:
        if d not in ("note", "warning", "seealso"):
            directives.register_directive(d, Passthrough)
    files = sorted(glob.glob(os.path.join(ROOT, "docs", "**", "*.rst"),
                             recursive=True))
    failed = 0
    for i, path in enumerate(files, 1):
        rel = os.path.relpath(path, ROOT)
        problems = check(path)
        if problems:
            failed += 1
            print(f"not ok {i} - {rel} parses")
            for line in problems.splitlines():
                print(f"# {line}")
        else:
            print(f"ok {i} - {rel} parses")
    print(f"1..{len(files)}")
    return 1 if failed or not files else 0


if __name__ == "__main__":
    sys.exit(main())
