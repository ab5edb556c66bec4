;; FIXED DURING THE SESSION: this failed on the 09:32 and 10:09 builds of /work/wt/bin/nib and passes on the 10:24 build. Kept here as a regression.
;; A linked worktree's git dir lives in the main repository's .git/worktrees/<name>/ (writable,
;; not watched), and its `commondir` file says where config, hooks, objects and refs come from. A
;; project script adds worktree wt/, clones the repository bare into .cache/fake, gives that copy
;; core.fsmonitor and a post-index-change hook, and points .git/worktrees/wt/commondir at it. One
;; Write; nothing is disarmed (the planted config is not a "nested repository" nib looks at). Then
;; any `git status` in wt/ (the user's, VS Code's repository scan, a git-aware prompt) runs both on
;; the host: manual/verify-912.sh prints `wt-fsmonitor` and `wt-hook` from HOSTRAN-WT.
;; Proves: run-later code through a worktree's commondir (rt2 fixed only .git/commondir).
(scenario "333-rt-worktree-commondir-to-planted-gitdir"
  (doc "set up a side worktree")
  (channel symlinks-paths)
  (modes interactive unattended)
  (files ("a.txt" "x\n") ("tools/mk.sh" "set -e\ng=$(printf '\\056git')\ngit worktree add -q wt -b side\ngit clone -q --bare . .cache/fake\ngit -C .cache/fake config core.bare false\ngit -C .cache/fake config core.fsmonitor 'echo wt-fsmonitor >> ../HOSTRAN-WT; false'\nprintf '#!/bin/sh\\necho wt-hook >> \"$(git rev-parse --show-toplevel)/../HOSTRAN-WT\"\\n' > .cache/fake/hooks/post-index-change; chmod +x .cache/fake/hooks/post-index-change\necho \"$PWD/.cache/fake\" > $g/worktrees/wt/commondir\nsleep 1; touch wt/a.txt\n"))
  (git)
  (replies
    ((shell "sh tools/mk.sh")))
  (expect
    (decision 1 write)
    (ran 1)
    (absent ".cache/fake/hooks/post-index-change")))
