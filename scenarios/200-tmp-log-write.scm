(scenario "200-tmp-log-write"
  (doc "writing a log under /tmp")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "echo ok > /tmp/nib-scenario-200.log && rm -f /tmp/nib-scenario-200.log")))
  (expect
    (decision 1 write)
    (ran 1)))
