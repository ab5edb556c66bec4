;; compact: keep the conversation under a budget, so long sessions do not
;; outgrow the model's context.
;;
;;   nib exec --strategy compact "refactor the parser"
;;
;; Before each model call, when the messages are over the budget, the
;; oldest tool results are cut to a one-line stub (the model can read the
;; file again), oldest first, keeping the last few results whole (while
;; they fit) and the model's last read of every file it is editing. Past twice the budget,
;; the older half of the conversation is summarised by a quiet model call
;; (not streamed to the user) and replaced by the summary.
;;
;; Settings (--set key=value):
;;   compact_budget  tokens (about 4 characters each) the messages may take
;;                   (default 24000)
;;   compact_keep    recent tool results kept whole while that fits the
;;                   budget (default 6; past it, only the newest)

;; A message's size in characters: its text, its calls' arguments, and
;; what the wire format adds around them.
(define (message-size m)
  (+ 40
     (string-length (assoc-ref m "content" ""))
     (apply + (map (lambda (c)
                     (let ([a (assoc-ref c "arguments" "")])
                       (+ 40 (if (string? a) (string-length a) 80))))
                   (assoc-ref m "tool_calls" '())))))

(define (messages-tokens ms)
  (quotient (apply + (map message-size ms)) 4))

(define (compact-budget) (string->number (setting "compact_budget" "24000")))
(define (compact-keep) (string->number (setting "compact_keep" "6")))

(define (tool-message? m) (equal? (assoc-ref m "role" "") "tool"))
(define (stub? m) (starts-with? (assoc-ref m "content" "") "[elided by compact:"))

;; Every call the model made in ms, as call data (args parsed).
(define (calls-in ms)
  (apply append
         (map (lambda (m) (map call-data (assoc-ref m "tool_calls" '()))) ms)))

(define (call-path d) (assoc-ref (assoc-ref d "args" '()) "path" #f))

;; The paths the model edited or wrote, from its calls.
(define (edited-paths ms)
  (filter-map (lambda (d)
                (and (equal? (assoc-ref d "kind" "") "write") (list? (assoc-ref d "args" #f)) (call-path d)))
              (calls-in ms)))

;; call id -> the path an fs-read call read.
(define (read-paths ms)
  (filter-map (lambda (d)
                (and (equal? (assoc-ref d "name" "") "fs-read")
                     (list? (assoc-ref d "args" #f))
                     (cons (assoc-ref d "id" "") (or (call-path d) ""))))
              (calls-in ms)))

;; The call ids of the last read of each edited file: those stay whole.
(define (kept-reads ms)
  (let ([edited (edited-paths ms)])
    (let loop ([reads (reverse (read-paths ms))] [seen '()] [out '()])
      (cond
        [(null? reads) out]
        [(and (member (cdr (car reads)) edited) (not (member (cdr (car reads)) seen)))
         (loop (cdr reads) (cons (cdr (car reads)) seen) (cons (car (car reads)) out))]
        [else (loop (cdr reads) seen out)]))))

(define (stub m)
  (assoc-set m "content"
             (string-append "[elided by compact: " (number->string (message-size m))
                            " characters of " (assoc-ref m "name" "tool") " output; call it again if you need it]")))

;; Cut old tool results, oldest first, until under budget, keeping the
;; last `keep` results whole.
(define (elide ms budget keep)
  (let* ([tools (filter tool-message? ms)]
         [recent (take-at-most (reverse tools) keep)]
         [kept (kept-reads ms)])
    (let loop ([ms ms] [out '()] [total (messages-tokens ms)] [n 0])
      (cond
        [(null? ms) (cons n (reverse out))]
        [(and (> total budget)
              (tool-message? (car ms))
              (not (stub? (car ms)))
              (not (member (car ms) recent))
              (not (member (assoc-ref (car ms) "call_id" "") kept)))
         (let ([s (stub (car ms))])
           (loop (cdr ms) (cons s out)
                 (- total (quotient (- (message-size (car ms)) (message-size s)) 4))
                 (+ n 1)))]
        [else (loop (cdr ms) (cons (car ms) out) total n)]))))

;; Summarise the older half with a quiet call; keep the task and the newer half.
(define (summarise ms)
  (let* ([half (quotient (length ms) 2)]
         [older (take-at-most (cdr ms) (- half 1))]
         [newer (list-tail ms half)]
         [newer (if (and (not (null? newer)) (tool-message? (car newer))) (cdr newer) newer)]
         [reply (model-reply (append older
                                     (list (json-object "role" "user" "content"
                                                        "Summarise the work so far for yourself: what the task is, what you found, which files you changed and how, and what is left. Be brief and exact.")))
                             0
                             (json-object "quiet" #t "tools" '()))])
    (if (assoc-ref reply "error" #f)
        ms
        (begin
          (strategy-event "compact" (string-append "summarised " (number->string (length older)) " earlier messages"))
          (append (list (car ms)
                        (json-object "role" "user" "content"
                                     (string-append "(Summary of the earlier part of this session)\n" (assoc-ref reply "text" ""))))
                  newer)))))

(on "before-model"
    (lambda (messages tools)
      (let ([budget (compact-budget)])
        (if (<= (messages-tokens messages) budget)
            messages
            ;; The recent results stay whole unless that alone is over
            ;; the budget; then only the newest does.
            (let* ([first (elide messages budget (compact-keep))]
                   [cut (if (> (messages-tokens (cdr first)) budget)
                            (let ([second (elide (cdr first) budget 1)])
                              (cons (+ (car first) (car second)) (cdr second)))
                            first)]
                   [ms (cdr cut)])
              (if (> (car cut) 0)
                  (strategy-event "compact" (string-append "elided " (number->string (car cut)) " old tool results"))
                  #f)
              (if (> (messages-tokens ms) (* 2 budget)) (summarise ms) ms))))))
