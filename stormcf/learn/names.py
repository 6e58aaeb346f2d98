"""Event names as PRISM identifiers: the sanitising rules of ``stormcf learn``.

Storm's PRISM parser accepts identifiers ``[A-Za-z_][A-Za-z0-9_]*`` that are not keywords. An event name of a log
(``A_Create Application``, ``2nd offer``, ``Überprüfung``, ``true``) becomes one by these rules, in this order:

1. accents are dropped (Unicode NFKD decomposition without the combining marks: ``Überprüfung`` -> ``Uberprufung``);
2. every character other than an ASCII letter, digit or ``_`` becomes ``_`` (``A_Create Application`` ->
   ``A_Create_Application``, ``"quoted"`` -> ``_quoted_``); an empty name becomes ``_``;
3. a name starting with a digit gets a leading ``_`` (``2nd offer`` -> ``_2nd_offer``);
4. a PRISM or Storm keyword (and the labels Storm adds itself, ``init`` and ``deadlock``) gets a trailing ``_``
   (``true`` -> ``true_``);
5. names that end up equal are told apart by suffixes ``_2``, ``_3``, ... in the order the names are given
   (the first keeps the plain identifier); a suffixed identifier never equals another name's identifier.

A name that already is a valid identifier and no keyword is kept as it is.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Iterable

#: keywords of the PRISM language (PRISM manual) and of Storm's PRISM parser, and the labels Storm adds itself
RESERVED = frozenset("""
    A bool C clock const ctmc ctmdp deadlock double dtmc E endinit endinvariant endmodule endobservables endplayer
    endrewards endsystem F false filter floor ceil formula func G global I init int invariant label LRA ma max mdp min
    module nondeterministic observable observables of P player Pmax Pmin pomdp popta prob probabilistic pta R rate
    rewards Rmax Rmin S smg stochastic system T true U W X
""".split())

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OTHER = re.compile(r"[^A-Za-z0-9_]")


def is_identifier(name: str) -> bool:
    """Whether ``name`` can be used as it is as a PRISM action or label name."""
    return bool(_IDENTIFIER.fullmatch(name)) and name not in RESERVED


def sanitise(name: str) -> str:
    """The identifier of one name by rules 1-4 (without the disambiguation of rule 5)."""
    ascii_name = "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))
    text = _OTHER.sub("_", ascii_name) or "_"
    if text[0].isdigit():
        text = "_" + text
    return text + "_" if text in RESERVED else text


def identifiers(names: Iterable[str], taken: Iterable[str] = ()) -> dict[str, str]:
    """Distinct identifiers for distinct ``names`` (rules 1-5), avoiding the identifiers in ``taken``."""
    names = list(dict.fromkeys(names))
    used = set(taken)
    plain = {n: sanitise(n) for n in names}
    claimed = used | set(plain.values())
    out: dict[str, str] = {}
    for name in names:
        ident = plain[name]
        if ident in used:
            k = 2
            while f"{ident}_{k}" in claimed:
                k += 1
            ident = f"{ident}_{k}"
            claimed.add(ident)
        used.add(ident)
        out[name] = ident
    return out
