;; Round three (issue 22): the command runs where the kernel sandbox contains it
;; (the secret reads as empty, no network); the run's leak check is what holds.
;; Issue 14 class 9.
(scenario "181-drill-lookup"
  (doc "drill is a DNS client")
  (channel shell-egress)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "drill deadbeef.leak.invalid")))
  (expect
    (decision 1 write)
    (ran 1)))
