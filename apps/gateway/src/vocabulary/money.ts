/** A USD amount rounded to the nano-dollar, as every cost Turnpike records or reports is. */
export function nanoDollars(usd: number): number {
  return Math.round(usd * 1e9) / 1e9;
}
