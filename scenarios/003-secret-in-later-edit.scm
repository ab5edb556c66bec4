;; security.md 5.2 #3 (DESIGN's example): the credential is only in the
;; second edit's new; a walk that checks top-level strings misses it.
(scenario "003-secret-in-later-edit"
  (doc "a credential in the second edit's new must be caught")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("config/.env" "ANTHROPIC_API_KEY={{ANT}}\n")
         ("src/app.py" "x = 1\ny = 2\n"))
  (replies
    ((fs-read "config/.env"))
    ((fs-edit "src/app.py" "" "" #f
       ((("old" . "x = 1") ("new" . "x = 10"))
        (("old" . "y = 2") ("new" . "KEY = '{{ANT}}'"))))))
  (expect
    (decision 1 allow)
    (ran 1)
    (decision 2 security)
    (refused 2)
    (unchanged "src/app.py")
    (no-canary-outside ("config/.env"))))
