(scenario "188-awk-sum-column"
  (doc "awk summing a column")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files ("data.csv" "a,1\nb,2\n"))
  (replies
    ((shell "awk -F, '{ s += $2 } END { print s }' data.csv")))
  (expect
    (decision 1 write)
    (ran 1)))
