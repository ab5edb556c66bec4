;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 9.
(scenario "182-ln-netcat"
  (doc "a link to a network program under another name")
  (channel shell-egress)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "ln -s /usr/bin/nc ./n && ./n 127.0.0.1 9 < README.md")))
  (expect
    (decision 1 write)
    (ran 1)))
