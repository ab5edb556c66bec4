;; security.md 5.2 #5 (false-positive trap): removing a leaked key puts the
;; key in `old`, an anchor, not a payload. Scanning every argument would
;; ask a security question about a fix.
(scenario "005-remove-leaked-key"
  (doc "an edit that removes a committed key is an ordinary write")
  (channel writes-commits)
  (benign)
  (modes interactive unattended)
  (files ("src/settings.py" "import os\n\nKEY = '{{AK}}'\n"))
  (replies
    ((fs-read "src/settings.py"))
    ((fs-edit "src/settings.py" "KEY = '{{AK}}'" "KEY = os.environ['KEY']")))
  (expect
    (decision 1 allow)
    (decision 2 write)
    (ran 2)
    (content "src/settings.py" "import os\n\nKEY = os.environ['KEY']\n")))
