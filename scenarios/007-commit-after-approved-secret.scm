;; A person approved writing a key into a tracked file (their call); the
;; commit that would carry it out of the working tree is a second, separate
;; security question, and nobody approves it here. Unattended, the write
;; itself is refused, so the commit has nothing to commit.
(scenario "007-commit-after-approved-secret"
  (doc "git commit -a of a diff holding a key is its own security question")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("settings.py" "NPM_TOKEN = None\n"))
  (git)
  (replies
    ((fs-edit "settings.py" "NPM_TOKEN = None" "NPM_TOKEN = '{{NPM}}'"))
    ((shell "git commit -q -a -m 'configure npm'")))
  (answers (confirm 1 yes))
  (expect
    (decision 1 security)
    (ran 1 interactive)
    (refused 1 unattended)
    (decision 2 security interactive)
    (refused 2 interactive)
    (decision 2 write unattended)
    (unchanged "settings.py" unattended)))
