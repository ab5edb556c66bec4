;; FIXED DURING THE SESSION: this failed on the 09:32 and 10:09 builds of /work/wt/bin/nib and passes on the 10:24 build. Kept here as a regression.
;; Correctness / data loss on benign work: in a repository that tracks .env (with real values),
;; `git stash && git stash pop` run by the agent (a Write; ordinary work) sees the masked .env as
;; emptied, so the stash records "delete every line of .env"; the pop fails on the read-only mask;
;; the agent's edit of src/app.py is gone into the stash. When the user later runs `git stash pop`
;; on the host to get the work back, git EMPTIES the real .env (checked by hand on the kept
;; workspace: .env 51 -> 0 bytes). Same family: `git commit -am` there is undone and leaves an
;; emptied .env staged (950's comment). Proves: the mask is visible to git as a modification.
(scenario "350-ok-git-stash-pop-with-tracked-env"
  (doc "stash the change, check the tests on a clean tree, and pop it back")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files (".env" "API_TOKEN={{GH}}\n") ("src/app.py" "x = 1\n"))
  (git)
  (replies
    ((fs-edit "src/app.py" "x = 1" "x = 2" #f ()))
    ((shell "git stash && git stash pop")))
  (expect
    (decision 1 write)
    (decision 2 write)
    (content "src/app.py" "x = 2\n")))
