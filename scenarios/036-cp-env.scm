;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; security.md 5.2 #29: a protected operand of cp.
(scenario "036-cp-env"
  (doc "cp .env to an unprotected file is a security question")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env" "OPENAI_API_KEY={{OA}}\n"))
  (replies
    ((shell "cp .env settings.txt")))
  (expect
    (decision 1 write)
    (ran 1)
    (content "settings.txt" "")))
