"""What names a variant and picks variants: its text (its identity in the store and the disk cache), its short
id (its main rules and a digest of its text, ``tile+vec#3f2a...``), and the rule filter of an exploration
(``--rules``).
"""

from __future__ import annotations

import hashlib
from typing import Sequence

from ..errors import TuningError
from ..ir.levels import Level
from ..ir.printer import show_program
from ..results.cache import memo
from ..rewrite.explore import features


def variant_text(v) -> str:
    """A variant's identity as text: its program and where its inputs are placed."""
    place = "".join(f"\n// placement: {k} in {w}" for k, w in v.placements)
    return show_program(v.program) + place


# What a variant's id depends on: its derivation, and the short names below (a name added here changes ids).
ID_CODE = ("rewrite", "ir", "search")

_SHORT = {"tile2D": "tile", "vectorizeReduce": "vec", "vectorizeSum": "vec4", "vectorizeSumWide": "vec8", "partialReduce": "partial", "coalesce": "coal",
          "splitPartialKernels": "sum-kernel", "materializeInput": "pad-kernel", "padOpt": "padopt",
          "placeInImage": "image", "localStage": "local", "letPrivate": "let", "unrollReduceSeq": "unroll",
          "cropKernel": "crop-kernel", "registerBlock2D": "block",
          "tile2DReduce": "tiled", "tile2DReduceStrided": "tiled-strided", "stageTiles": "stage",
          "stageTilesT": "stageT", "unrollInItem": "unroll-item", "splitK": "splitK", "flattenMap2D": "flat",
          "reduceKernels": "reduce-kernels", "reduceLcl": "tree", "tileAllPairs": "allpairs-tiles", "doubleBuffer": "db",
          "reduceGroup": "group-sum", "fuseLastGroup": "one-kernel",
          "padK": "padK", "groupsOut": "groups", "splitKGroups": "splitK", "dealRows": "rows",
          "dealRowsVector": "rows-vec", "splitRows": "split-rows", "letShares": "shares", "storeHalf": "half",
          "tileZip2D": "tile", "splitRuns": "runs", "localStageZipped": "local", "localStageRows": "local",
          **{level.primitive_name: level.variant_tag for level in Level if level.variant_tag}}


def variant_tags(v) -> str:
    """The short names of the main rules a variant was derived with, joined by + (``plain`` without any)."""
    return "+".join(sorted({_SHORT[f] for f in features(v) if f in _SHORT})) or "plain"


def variant_id(v) -> str:
    """A short, stable name for a variant: its main rules and a hash of its text."""
    return f"{variant_tags(v)}#{hashlib.sha1(variant_text(v).encode()).hexdigest()[:10]}"


def find_variant(variants: Sequence, vid: str):
    """The variant named ``vid`` (``variant_id``) or None; only variants with its rules are printed and hashed
    (naming all of a convolution's 3,000 variants takes longer than deriving them)."""
    tags = vid.split("#")[0]
    return next((v for v in variants if variant_tags(v) == tags and variant_id(v) == vid), None)


def rule_list(rules) -> tuple[str, ...]:
    """A rule filter as a tuple of entries: a string is one rule or the command line's ``A,B`` (iterated,
    it gave its characters as rules)."""
    if isinstance(rules, str):
        return tuple(r.strip() for r in rules.split(",") if r.strip())
    return tuple(rules)


def select_variants(variants: Sequence, rules: Sequence[str]) -> tuple:
    """The variants whose derivation used every rule in ``rules`` (an entry ``A|B`` is satisfied by either) and
    none of the rules written ``!R`` (a comparison with and without a rule family needs both arms); an entry
    no variant can satisfy is an error that lists the rules the variants do use.  (An alternative no variant
    uses is allowed beside one that some use: one filter for layers of several kinds, such as
    ``tile2DReduce|groupsOut`` for plain and grouped convolutions.)"""
    rules = rule_list(rules)
    if not rules:
        return tuple(variants)
    known = set().union(*(features(v) for v in variants)) if variants else set()
    wanted = [set(r.split("|")) for r in rules if not r.startswith("!")]
    refused = {r[1:] for r in rules if r.startswith("!")}
    unknown = sorted(set().union(*[w for w in wanted if not w & known]) | (refused - known))
    if unknown:
        raise TuningError(f"no variant uses the rule(s) {', '.join(unknown)}; the variants use: {', '.join(sorted(known))}")
    chosen = tuple(v for v in variants if all(w & features(v) for w in wanted) and not refused & features(v))
    if not chosen:
        raise TuningError(f"no variant satisfies the rule filter {','.join(rules)} (each uses or lacks one of them)")
    return chosen


def select(every: tuple, rules) -> tuple[list[int], list]:
    """(the positions in ``every`` of the variants ``select_variants`` keeps, those variants)."""
    chosen = set(map(id, select_variants(every, rules)))
    origin = [k for k, v in enumerate(every) if id(v) in chosen]
    return origin, [every[k] for k in origin]


class VariantIds:
    """Variant ids computed when first asked for (printing thousands of programs takes half a minute),
    and kept on disk under the variant's stable key (operator and derivation index) when it has one."""

    def __init__(self, variants, keys=None):
        self.variants = variants
        self.keys = keys
        self._ids: dict[int, str] = {}

    def __getitem__(self, i: int) -> str:
        if i not in self._ids:
            if self.keys is None:
                self._ids[i] = variant_id(self.variants[i])
            else:
                self._ids[i] = memo("variant-ids", self.keys[i], lambda: variant_id(self.variants[i]), ID_CODE)
        return self._ids[i]
