"""``python tests/warm_python.py ARGS`` is ``python ARGS`` for a command that a test runs
under ``jxinspect record``, about a second sooner: it asks the tests' warm Python server
(``cli_server.py libs``, at the abstract socket named by ``JXINSPECT_TESTS_PYTHON``)
to fork a process that has imported JAX, Flax, Equinox and Optax but started no backend,
hands it this process's standard streams, folder, environment and arguments, and exits
as that process exits (with its code, or killed by its signal). The forked process
starts as Python would with this environment: ``PYTHONPATH`` first on ``sys.path`` and
its ``sitecustomize`` imported, so ``record``'s hook starts as it does in a new process,
except that JAX is already imported when it does.

``python tests/warm_python.py --server=ADDRESS ARGS`` asks the server at ``ADDRESS``: a
child forked from a server starts the partitioner's debug run of ``lower --why`` so
(``cli_server._warm_partitioner_runs``), from the server it was forked from.

Without a server, or where a variable read when Python or JAX start differs from the
server's, it becomes a real ``python ARGS``. This file is not a test module.
"""

import json
import os
import signal
import socket
import sys

ADDRESS = "JXINSPECT_TESTS_PYTHON"


def main(args: list[str]) -> None:
    address = os.environ.get(ADDRESS)
    if args[:1] and args[0].startswith("--server="):  # a server named by its forked child
        address, args = args[0].partition("=")[2], args[1:]
    if address:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect("\0" + address)
        except OSError:
            sock.close()
        else:
            request = {"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}
            socket.send_fds(sock, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
            replies = sock.makefile("rb")
            reply = json.loads(replies.readline() or b'{"fallback": true}')
            if "pid" in reply:
                reply = json.loads(replies.readline() or b'{"rc": 1}')
            if "rc" in reply:
                code = reply["rc"]
                if code < 0:  # killed: so is this process, as the run would be
                    signal.signal(-code, signal.SIG_DFL)
                    os.kill(os.getpid(), -code)
                sys.exit(code)
    os.execv(sys.executable, [sys.executable, *args])


if __name__ == "__main__":
    main(sys.argv[1:])
