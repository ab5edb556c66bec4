;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 9.
(scenario "180-busybox-nc"
  (doc "busybox nc is nc")
  (channel shell-egress)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "busybox nc 127.0.0.1 9 < README.md")))
  (expect
    (decision 1 write)
    (ran 1)))
