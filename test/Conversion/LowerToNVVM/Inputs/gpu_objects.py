"""Prints the objects that gpu-module-to-binary embedded in an MLIR module.

  gpu_objects.py ptx  FILE   the PTX text of every object (format=isa)
  gpu_objects.py info FILE   one line per object: its kind, size and magic
  gpu_objects.py dump FILE DIR   writes object N to DIR/N.bin
  gpu_objects.py info-file OBJ   the info line of a file holding one object
  gpu_objects.py host FILE   what the host code does beside launching kernels:
                             its branches (loops, conditions), the loads and
                             stores it makes itself, its launches and calls,
                             and its waits for the kernels

The object is the string attribute of #gpu.object (`assembly = "..."`, `bin =
"..."` or a bare string for fatbin/offload), escaped the way MLIR prints
strings: \\XX hex bytes, \\\\ and \\".
"""
import os
import re
import sys


def unescape(text):
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1]
            if nxt in "\\\"":
                out.append(ord(nxt))
                i += 2
                continue
            out.append(int(text[i + 1:i + 3], 16))
            i += 3
            continue
        out.extend(c.encode("latin-1"))
        i += 1
    return bytes(out)


# After the target (`chip = "sm_90"` holds quotes too): `assembly = "`,
# `bin = "`, or the bare string after the target or the properties.
STRING = re.compile(r'(?:(assembly|bin) = |[}>], )"((?:[^"\\]|\\.)*)"')


def objects(path):
    with open(path, encoding="latin-1") as f:
        text = f.read()
    start = text.find("#gpu.object<")
    while start >= 0:
        match = STRING.search(text, start)
        if not match:
            return
        kind = match.group(1) or "fatbin"
        yield kind, unescape(match.group(2))
        start = text.find("#gpu.object<", match.end())


def magic(data):
    if data.startswith(b"\x7fELF"):
        return "elf"
    if data[:4] == bytes([0x50, 0xED, 0x55, 0xBA]):
        return "fatbin"
    if data.lstrip().startswith(b"//"):
        return "ptx"
    return "unknown"


def host_summary(path):
    """Counts in the LLVM-dialect host code, the GPU binary left out."""
    with open(path, encoding="latin-1") as f:
        lines = [l for l in f if not l.lstrip().startswith("gpu.binary")]
    text = "".join(lines)
    counts = {
        "branches": len(re.findall(r"\bllvm\.(?:cond_)?br\b", text)),
        "loads": text.count("llvm.load "),
        "stores": text.count("llvm.store "),
        "launches": text.count("gpu.launch_func "),
        "gemm-calls": text.count("llvm.call @recast_gemm("),
        "memref-copies": text.count("llvm.call @memrefCopy(")
        + text.count("llvm.intr.memcpy"),
        # Where the host waits for the kernels launched before.
        "waits": text.count("llvm.call @mgpuStreamSynchronize("),
    }
    print("host: " + ", ".join(f"{k} {v}" for k, v in counts.items()))


def main():
    mode, path = sys.argv[1], sys.argv[2]
    if mode == "host":
        host_summary(path)
        return
    if mode == "info-file":
        # A file holding one object (a cubin from ptxas, say).
        with open(path, "rb") as f:
            data = f.read()
        found = [("file", data)]
        mode = "info"
    else:
        found = list(objects(path))
    if not found:
        sys.exit("no #gpu.object in " + path)
    for index, (kind, data) in enumerate(found):
        if mode == "ptx":
            sys.stdout.write(data.decode("latin-1"))
        elif mode == "info":
            line = f"object {index}: {kind}, {len(data)} bytes, magic {magic(data)}"
            if magic(data) == "elf":
                # e_machine 190 is EM_CUDA.
                line += f", machine {int.from_bytes(data[18:20], 'little')}"
            print(line)
        elif mode == "dump":
            with open(os.path.join(sys.argv[3], f"{index}.bin"), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
