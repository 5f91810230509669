"""Case registration: every case names the requirement IDs it covers and its profile.

A case is a function taking a Context (harness/context.py). It passes by returning, fails by
raising Fail (or any exception: an exception the case did not expect is a failure too, with its
type and message), and skips by raising Skip (a fixture the machine lacks, never a requirement
the implementation gets wrong).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

PROFILES = ("core", "streams", "python", "exchange", "table")
# "table" is not a profile of a library: it holds the EXCH-TABLE-* requirements of
# spec/profiles/exchange.md, which bind any producer's DLPackExchangeAPI table and are tested
# with `--exchange MODULE:TYPE` (exchange_cases/), not with `--lib`.
ID_RE = re.compile(r"^[A-Z][A-Z0-9]*(-[A-Z0-9]+)+-[0-9]+$")


class Fail(AssertionError):
    """The implementation broke a requirement."""


class Skip(Exception):
    """The case cannot run here (a fixture is missing); says why."""


@dataclass
class Case:
    id: str
    covers: tuple
    profile: str
    fn: Callable
    module: str
    needs: tuple = field(default_factory=tuple)
    timeout: float = 30.0
    advisory: bool = False


CASES: dict[str, Case] = {}


def case(case_id: str, *, covers, profile: str, needs=(), timeout: float = 30.0, advisory=False):
    """Register `fn` as case `case_id` (unique, stable) covering requirement IDs `covers`.

    `advisory`: the case checks only SHOULD requirements (a recommendation): its failure is
    reported as a warning ("warn") and does not make the implementation non-conforming."""
    covers = tuple(covers)
    if not covers:
        raise ValueError(f"case {case_id} covers no requirement")
    for rid in covers:
        if not ID_RE.match(rid):
            raise ValueError(f"case {case_id}: {rid!r} is not a requirement ID")
    if profile not in PROFILES:
        raise ValueError(f"case {case_id}: unknown profile {profile!r}")

    def register(fn):
        if case_id in CASES:
            raise ValueError(f"case {case_id} is defined twice")
        CASES[case_id] = Case(case_id, covers, profile, fn, fn.__module__, tuple(needs), timeout,
                              advisory)
        return fn

    return register

