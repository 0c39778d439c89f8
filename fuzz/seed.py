# Collect seed models: .mo files of the repo's own tests, library and examples, and the
# Modelica texts embedded as raw strings in its Rust tests (r#"...model ... end ...;"#).
import os, re, sys, hashlib
root, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
seen = set()
def emit(text):
    b = text.encode()
    if len(b) > 16*1024 or len(b) < 10: return
    h = hashlib.sha1(b).hexdigest()
    if h in seen: return
    seen.add(h)
    open(os.path.join(out, h), "wb").write(b)
raw = re.compile(r'r(#+)"(.*?)"\1', re.S)
for top in ["crates", "library", "examples"]:
    for d, dirs, fs in os.walk(os.path.join(root, top)):
        if "/target" in d: continue
        for f in fs:
            p = os.path.join(d, f)
            if f.endswith(".mo"):
                emit(open(p, errors="replace").read())
            elif f.endswith(".rs") and ("/tests" in p or "test" in f):
                for m in raw.finditer(open(p, errors="replace").read()):
                    t = m.group(2)
                    if re.search(r'\b(model|block|class|package)\b', t) and re.search(r'\bend\b', t):
                        emit(t)
                for m in re.finditer(r'(?<![r#])"((?:[^"\\]|\\.)*)"', open(p, errors="replace").read(), re.S):
                    t = m.group(1)
                    if not (re.search(r'\b(model|block|class|package)\b', t) and re.search(r'\bend\b', t)): continue
                    t = re.sub(r'\\\n\s*', '', t)
                    t = t.replace('\\n', '\n').replace('\\t', '\t').replace('\\"', '"').replace('\\\\', '\\')
                    emit(t)
print(len(seen))
