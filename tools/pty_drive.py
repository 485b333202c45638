#!/usr/bin/env python3
"""Drive a program through a pseudo-terminal, as a person at a keyboard.

    pty_drive.py [--cols N] [--env K=V ...] -- program args...   < keys.txt

keys.txt holds one chunk of keystrokes per line, sent with a pause between
chunks (escape sequences as Python string escapes: \\t is Tab, \\x1b[A is
the up arrow, \\r is Enter).  Everything the program writes to the terminal
is printed to stdout.  A chunk "@wait:TEXT" sends nothing: it waits (up to
30 s) until TEXT has appeared in the output since the last wait, so a key
can be timed against what the program is doing rather than the clock (a
Ctrl-C meant for a convolution must not land in the setup line before it
on a loaded machine).  Standard library only (spec/repl_spec.lua uses it).
"""
import fcntl, os, pty, select, struct, sys, termios, time

def main():
    argv = sys.argv[1:]
    env = dict(os.environ)
    cols = None
    while argv and argv[0] in ("--env", "--cols"):
        if argv[0] == "--cols":
            cols = int(argv[1])
        else:
            k, v = argv[1].split("=", 1)
            env[k] = v
        argv = argv[2:]
    if argv and argv[0] == "--":
        argv = argv[1:]
    chunks = [line.rstrip("\n").encode().decode("unicode_escape") for line in sys.stdin]
    env["TERM"] = "xterm"
    pid, fd = pty.fork()
    if pid == 0:
        if cols:  # the window size the program asks the terminal for (TIOCGWINSZ)
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, cols, 0, 0))
            env.pop("COLUMNS", None)  # no hint from the environment: the terminal answers
        os.execvpe(argv[0], argv, env)
    out = bytearray()

    def pump(seconds):
        end = time.time() + seconds
        while True:
            left = end - time.time()
            if left <= 0:
                return True
            r, _, _ = select.select([fd], [], [], left)
            if r:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    return False
                if not data:
                    return False
                out.extend(data)

    def pump_until(text, seconds):
        end = time.time() + seconds
        while text not in out[seen:]:
            left = end - time.time()
            if left <= 0 or not pump(min(left, 0.05)):
                return False
        return True

    alive = pump(1.0)
    seen = 0
    for c in chunks:
        if not alive:
            break
        if c.startswith("@wait:"):
            text = c[len("@wait:"):].encode()
            pump_until(text, 30.0)
            seen = len(out)
            continue
        os.write(fd, c.encode())
        alive = pump(0.4)
    # Ctrl-D ends the REPL.  Under load a keystroke typed while the program
    # was still busy can be dropped (a Ctrl-C at the prompt discards the
    # typed-ahead line), so the Ctrl-D is sent again every 2 s, and after 60 s
    # the program is killed: a spec then fails on its output instead of the
    # suite waiting for ever (interrupt_spec hung 15+ minutes that way).
    deadline = time.time() + 60
    while True:
        if alive:
            try:
                os.write(fd, b"\x04")
            except OSError:
                alive = False
            alive = pump(2.0) and alive
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            break
        if done:
            break
        if not alive:
            time.sleep(0.1)
        if time.time() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            out.extend(b"\n[pty_drive: killed after 60 s]\n")
            break
    sys.stdout.write(out.decode("utf-8", "replace"))

main()
