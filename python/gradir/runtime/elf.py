"""Reading a 64-bit little-endian ELF shared library without loading it.

``load`` checks an exported library with this before ``dlopen`` runs any
of its code: the file is complete, the signature symbol lies in the file
and every function it names is a defined function in executable code.
numpy-free and MLIR-free (``struct`` only).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ElfError", "ElfSymbol", "ElfImage", "read_elf"]

PT_LOAD, PF_X = 1, 1
SHT_DYNSYM = 11
STT_FUNC, STT_OBJECT = 2, 1


class ElfError(ValueError):
    """The file is not a complete, well-formed 64-bit ELF shared library."""


@dataclass(frozen=True)
class ElfSymbol:
    name: str
    kind: int        # STT_*
    defined: bool
    value: int       # virtual address
    size: int


@dataclass
class ElfImage:
    path: Path
    data: bytes
    segments: list   # (vaddr, filesz, memsz, offset, flags) of PT_LOAD
    symbols: dict    # name -> ElfSymbol (dynamic symbols)

    def file_range(self, vaddr: int, size: int) -> tuple[int, int] | None:
        """File offsets [start, end) holding ``size`` bytes at ``vaddr``, or
        None when they are not all backed by the file."""
        for seg_vaddr, filesz, _, offset, _ in self.segments:
            if seg_vaddr <= vaddr and vaddr + size <= seg_vaddr + filesz:
                start = offset + vaddr - seg_vaddr
                return start, start + size
        return None

    def executable(self, vaddr: int) -> bool:
        return any(v <= vaddr < v + filesz and flags & PF_X
                   for v, filesz, _, _, flags in self.segments)


def _unpack(fmt: str, data: bytes, offset: int, what: str):
    try:
        return struct.unpack_from(fmt, data, offset)
    except struct.error:
        raise ElfError(f"truncated or corrupt ({what} past the end of the file)") from None


def read_elf(path: Path) -> ElfImage:
    data = Path(path).read_bytes()
    size = len(data)
    if size < 64 or data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ElfError("not a 64-bit little-endian ELF shared library")
    phoff, shoff = _unpack("<QQ", data, 32, "header")
    phentsize, phnum, shentsize, shnum = _unpack("<HHHH", data, 54, "header")
    if phentsize != 56 or shentsize != 64 or phoff + phnum * 56 > size \
            or shoff + shnum * 64 > size:
        raise ElfError(f"truncated or corrupt (its headers point past its {size} bytes)")
    segments = []
    for i in range(phnum):
        p_type, p_flags, p_offset, p_vaddr, _, p_filesz, p_memsz, _ = _unpack(
            "<IIQQQQQQ", data, phoff + i * 56, "program header")
        if p_type == PT_LOAD:
            if p_offset + p_filesz > size:
                raise ElfError(f"truncated or corrupt (a segment ends past its {size} bytes)")
            segments.append((p_vaddr, p_filesz, p_memsz, p_offset, p_flags))
    sections = [_unpack("<IIQQQQIIQQ", data, shoff + i * 64, "section header")
                for i in range(shnum)]
    symbols: dict[str, ElfSymbol] = {}
    for sh in sections:
        if sh[1] != SHT_DYNSYM:
            continue
        sym_off, sym_size, link = sh[4], sh[5], sh[6]
        if link >= len(sections) or sym_off + sym_size > size:
            raise ElfError("corrupt dynamic symbol table")
        str_off, str_size = sections[link][4], sections[link][5]
        if str_off + str_size > size:
            raise ElfError("corrupt dynamic string table")
        for k in range(sym_size // 24):
            st_name, st_info, _, st_shndx, st_value, st_size = _unpack(
                "<IBBHQQ", data, sym_off + k * 24, "symbol")
            if st_name >= str_size:
                raise ElfError("corrupt symbol name")
            end = data.find(b"\0", str_off + st_name, str_off + str_size)
            if end < 0:
                raise ElfError("corrupt symbol name")
            name = data[str_off + st_name:end].decode("utf-8", "replace")
            symbols[name] = ElfSymbol(name, st_info & 0xF, st_shndx != 0, st_value, st_size)
    return ElfImage(Path(path), data, segments, symbols)
