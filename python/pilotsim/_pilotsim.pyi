"""Type stubs of the native module (see python/src/lib.rs); use the `pilotsim` package."""

from typing import List, Optional, Tuple

class ArrowColumn:
    @property
    def name(self) -> str: ...
    def __len__(self) -> int: ...
    def __arrow_c_array__(self, requested_schema: Optional[object] = None) -> Tuple[object, object]: ...

Table = Tuple[str, List[ArrowColumn]]

def run(
    kind: str, source: str, sets: List[str], seed: Optional[int] = None, out: Optional[str] = None
) -> Tuple[str, str, List[str], List[Table]]: ...
def sweep(
    kind: str,
    source: str,
    vary: List[Tuple[str, Optional[str], List[str]]],
    replicas: int,
    sets: List[str],
    threads: Optional[int] = None,
    out: Optional[str] = None,
) -> Tuple[Table, Table]: ...
def validate(kind: str, source: str) -> List[str]: ...
def version() -> str: ...
