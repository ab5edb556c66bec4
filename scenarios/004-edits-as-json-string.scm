;; security.md 5.2 #4: the edit list arrives as a JSON string (a model
;; quirk the parser accepts); the guard must read inside it too.
(scenario "004-edits-as-json-string"
  (doc "a secret inside edits sent as a JSON string is still a payload")
  (channel writes-commits)
  (modes interactive unattended)
  (files ("src/app.py" "x = 1\ny = 2\n"))
  (replies
    ((fs-edit "src/app.py" "" "" #f
       "[{\"old\": \"x = 1\", \"new\": \"x = 10\"}, {\"old\": \"y = 2\", \"new\": \"SLACK = '{{SL}}'\"}]")))
  (expect
    (decision 1 security)
    (refused 1)
    (unchanged "src/app.py")))
