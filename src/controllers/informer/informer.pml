/*
 * Informers under `faults: [stale-reads]` (client-go tools/cache: a reflector's watch delivers
 * events late; Sieve's stale-read pattern). The scheduler's cache and the descheduler's pod
 * lister lag behind the API server by up to STALE_LAG deletions of running pods (main.pml:
 * stale_deletion). This process delivers the oldest undelivered deletion, at any moment; the
 * scheduler then retries the pods it gave up on, as it does on any pod deletion event.
 */
hidden int inf_k;

proctype Informer() {
end_informer:
  do
  :: atomic {
       phantom[1] > 0 ->
       d_step {
         inf_k = STALE_LAG;
         do
         :: phantom[inf_k] == 0 -> inf_k--
         :: else -> break
         od;
         printf("KIVI:%d:%d:%d\n", EVENT_INFORMER_CAUGHT_UP, phantom[inf_k], phantom_node[inf_k]);
         phantom[inf_k] = 0; phantom_node[inf_k] = 0; phantom_rev[inf_k] = 0;
         inf_k = 0;
         retry_unschedulable();
         canonical()
       }
     }
  od
}
