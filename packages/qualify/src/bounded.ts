/**
 * At most `limit` tasks at a time: the qualification's builds, packs and installs share the
 * machine's cores (QUALIFY_JOBS, by default the number of cores, at least 1).
 */
export const bounded = (limit: number) => {
  let active = 0
  const waiting: Array<() => void> = []
  const release = () => {
    active -= 1
    waiting.shift()?.()
  }
  return <A>(task: () => Promise<A>): Promise<A> =>
    new Promise<A>((resolve, reject) => {
      const start = () => {
        active += 1
        Promise.resolve().then(task).then(resolve, reject).finally(release)
      }
      if (active < limit) start()
      else waiting.push(start)
    })
}
