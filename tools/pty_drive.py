#!/usr/bin/env python3
"""Drive a program through a pseudo-terminal, as a person at a keyboard.

    pty_drive.py [--cols N] [--env K=V ...] -- program args...   < keys.txt

keys.txt holds one chunk of keystrokes per line, sent with a pause between
chunks (escape sequences as Python string escapes: \\t is Tab, \\x1b[A is
the up arrow, \\r is Enter).  Everything the program writes to the terminal
is printed to stdout.  Standard library only (spec/repl_spec.lua uses it).
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

    alive = pump(1.0)
    for c in chunks:
        if not alive:
            break
        os.write(fd, c.encode())
        alive = pump(0.4)
    if alive:
        os.write(fd, b"\x04")  # Ctrl-D ends the REPL
        pump(1.0)
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
    sys.stdout.write(out.decode("utf-8", "replace"))

main()
