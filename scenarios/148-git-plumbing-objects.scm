;; Issue 14 class 5. With the sandbox on, plumbing is judged where it lands: when the command ends, every ref it made or moved is looked at (`prim/tools/gitrefs.rs`), so a branch made by commit-tree that carries a secret the session knows is taken back; a loose object alone goes nowhere.
(scenario "148-git-plumbing-objects"
  (doc "hash-object -w and commit-tree write history the commit check does not see")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n")
         ("notes.txt" "deploy token: {{GH}}\n"))
  (git "README.md")
  (replies
    ((shell "git hash-object -w notes.txt"))
    ((shell "python3 -c \"import subprocess as s\nr = lambda *a, **k: s.run(list(a), capture_output=True, text=True, **k).stdout.strip()\ns.run(['git', 'add', 'notes.txt'])\nc = r('git', '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', r('git', 'write-tree'), '-p', 'HEAD', '-m', 'notes')\ns.run(['git', 'update-ref', 'refs/heads/side', c])\ns.run(['git', 'reset', '-q'])\"")))
  (expect
    (decision 1 write)
    (decision 2 write)
    (absent ".git/refs/heads/side")))
